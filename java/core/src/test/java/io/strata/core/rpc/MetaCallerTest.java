package io.strata.core.rpc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.NotLeaderException;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.Op;
import io.strata.core.testing.FakeMember;
import io.strata.proto.v1.GetFileStatusRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.After;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * {@link MetaCaller}'s pacing on a fake clock that only the pauses move, against fake members:
 * which member each attempt goes to, the pauses between rounds, and the retry deadline; over
 * gRPC and over callwire, whose answers and failures it must take alike.
 */
@RunWith(Parameterized.class)
public class MetaCallerTest {
  /** The transports: gRPC, callwire. */
  @Parameterized.Parameters(name = "callwire={0}")
  public static List<Object[]> transports() {
    return List.of(new Object[] {false}, new Object[] {true});
  }

  @Parameterized.Parameter
  public boolean callwire;

  /** The links to members, over callwire or gRPC. */
  static Function<HostPort, MetaCaller.Link> dial(boolean callwire) {
    return callwire ? hp -> new CallSocket(hp, Tls.plaintext(), null)
        : MetaCaller.overGrpc(Channels::open);
  }

  private static final Duration RETRY = Duration.ofSeconds(2);
  /**
   * The connect timeout of the tests of first contact; the others wait 20 s for it, which real
   * time (that bounds the first attempts too) never reaches, so that they count pauses only.
   */
  private static final Duration CONNECT = Duration.ofSeconds(1);

  private final List<FakeMember> members = new ArrayList<>();
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final List<Long> pauses = new ArrayList<>();
  private MetaCaller caller;

  @After
  public void tearDown() throws Exception {
    if (caller != null) {
      caller.close();
    }
    for (FakeMember m : members) {
      m.close();
    }
  }

  private FakeMember member() throws IOException {
    FakeMember m = FakeMember.start();
    members.add(m);
    return m;
  }

  private MetaCaller caller(String... addresses) {
    return caller(Duration.ofSeconds(20), addresses);
  }

  private MetaCaller caller(Duration connect, String... addresses) {
    List<HostPort> hps = new ArrayList<>();
    for (String a : addresses) {
      hps.add(HostPort.parse(a));
    }
    caller = new MetaCaller(hps, Duration.ofSeconds(20), RETRY, connect, dial(callwire), now::get,
        nanos -> {
          pauses.add(nanos);
          now.addAndGet(nanos);
        });
    return caller;
  }

  private void getFileStatus() throws IOException {
    caller.call(Op.GET_FILE_STATUS, "strata://ns/a",
        u -> u.call(MetaServiceGrpc.getGetFileStatusMethod(),
            GetFileStatusRequest.getDefaultInstance()));
  }

  @Test
  public void aNamedLeaderIsCalledAtOnce() throws Exception {
    FakeMember leader = member();
    FakeMember follower = member();
    follower.follow(leader.address());
    caller(follower.address(), leader.address());

    getFileStatus();
    assertEquals(List.of(), pauses);
    assertEquals(HostPort.parse(leader.address()), caller.leader());
    // Over the transport asked for: one callwire connection to each member, or none.
    assertEquals(callwire ? 1 : 0, follower.callwireConnections());
    assertEquals(callwire ? 1 : 0, leader.callwireConnections());
  }

  @Test
  public void aStaleLeaderNamedByACutOffMemberDoesNotHideTheRealOne() throws Exception {
    FakeMember cutOff = member();
    cutOff.follow(FakeMember.deadAddress()); // The old leader, gone and not listed.
    FakeMember leader = member();
    caller(cutOff.address(), leader.address());

    getFileStatus();
    assertEquals(1, leader.received().size());
    assertEquals(List.of(), pauses);
    assertEquals(HostPort.parse(leader.address()), caller.leader());
  }

  @Test
  public void roundsOverTheMembersPauseWithGrowingJitteredBackoffUntilTheDeadline()
      throws Exception {
    FakeMember a = member();
    FakeMember b = member();
    a.follow(null);
    b.follow(null);
    caller(a.address(), b.address());

    assertThrows(NotLeaderException.class, this::getFileStatus);

    // Each round asks a then b, and a pause separates rounds.
    assertEquals(pauses.size() + 1, a.received().size());
    assertEquals(pauses.size() + 1, b.received().size());
    long cap = MetaCaller.BACKOFF_MIN_NANOS;
    long total = 0;
    for (long p : pauses) {
      assertTrue(p + " within [" + cap / 2 + ", " + cap + "]", p >= cap / 2 && p <= cap);
      cap = Math.min(2 * cap, MetaCaller.BACKOFF_MAX_NANOS);
      total += p;
    }
    // It gave up when the next pause would have crossed the deadline, not before.
    assertTrue(total + " <= " + RETRY, total <= RETRY.toNanos());
    assertTrue(total + " >= deadline - one pause", total >= RETRY.toNanos()
        - MetaCaller.BACKOFF_MAX_NANOS);
  }

  @Test
  public void membersNamingEachOtherDoNotSpin() throws Exception {
    FakeMember a = member();
    FakeMember b = member();
    a.follow(b.address());
    b.follow(a.address());
    caller(a.address(), b.address());

    NotLeaderException e = assertThrows(NotLeaderException.class, this::getFileStatus);
    assertTrue(e.getMessage(), e.getMessage().contains(a.address()
        + " (not the leader, which it says is " + b.address() + ")"));
    assertEquals(pauses.size() + 1, a.received().size());
  }

  @Test
  public void aMemberThatComesBackIsFoundAgain() throws Exception {
    FakeMember a = member();
    a.failNext(io.grpc.Status.UNAVAILABLE.asException());
    a.failNext(io.grpc.Status.UNAVAILABLE.asException());
    caller(a.address());

    getFileStatus();
    assertEquals(3, a.received().size());
    assertEquals(2, pauses.size());
  }

  @Test
  public void anInterruptedPauseEndsTheCall() throws Exception {
    FakeMember a = member();
    a.follow(null);
    caller = new MetaCaller(List.of(HostPort.parse(a.address())), Duration.ofSeconds(20), RETRY,
        CONNECT, dial(callwire), now::get, nanos -> {
          throw new InterruptedException();
        });
    assertThrows(InterruptedIOException.class, this::getFileStatus);
    assertTrue(Thread.interrupted());
  }

  private long paused() {
    return pauses.stream().mapToLong(Long::longValue).sum();
  }

  @Test
  public void nothingListeningIsSaidWithinTheConnectTimeout() throws Exception {
    String a = FakeMember.deadAddress();
    String b = FakeMember.deadAddress();
    caller(CONNECT, a, b);

    ServiceUnavailableException e =
        assertThrows(ServiceUnavailableException.class, this::getFileStatus);
    assertTrue(e.getMessage(), e.getMessage().startsWith("get_file_status strata://ns/a: "
        + "cannot reach the Strata namespace service at " + a + " (Connection refused), "
        + b + " (Connection refused); "));
    // It gave up by the connect timeout, not the retry deadline.
    assertTrue(paused() + " <= " + CONNECT, paused() <= CONNECT.toNanos());
    assertTrue(paused() + " >= connect timeout - one pause",
        paused() >= CONNECT.toNanos() - MetaCaller.BACKOFF_MAX_NANOS);
  }

  /** A member that answers, if only NOT_LEADER, was reached: the retry deadline bounds. */
  @Test
  public void aMemberThatAnswersNotLeaderWasReached() throws Exception {
    FakeMember a = member();
    a.follow(null);
    caller(CONNECT, a.address());

    assertThrows(NotLeaderException.class, this::getFileStatus);
    assertTrue(paused() + " > " + CONNECT, paused() > CONNECT.toNanos());
    assertTrue(paused() + " >= retry deadline - one pause",
        paused() >= RETRY.toNanos() - MetaCaller.BACKOFF_MAX_NANOS);
  }

  @Test
  public void onceReachedAMemberThatGoesAwayIsAFailover() throws Exception {
    FakeMember a = member();
    caller(CONNECT, a.address());
    getFileStatus();
    a.close();

    assertThrows(ServiceUnavailableException.class, this::getFileStatus);
    // The retry deadline, not the connect timeout, bounded the search.
    assertTrue(paused() + " > " + CONNECT, paused() > CONNECT.toNanos());
    assertTrue(paused() + " >= retry deadline - one pause",
        paused() >= RETRY.toNanos() - MetaCaller.BACKOFF_MAX_NANOS);
  }
}
