package io.strata.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import com.google.rpc.Code;
import io.grpc.Status;
import io.strata.core.error.NotLeaderException;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataException;
import io.strata.core.rpc.MetaCaller;
import io.strata.core.testing.FakeMember;
import io.strata.core.testing.FakeMember.Received;
import io.strata.proto.v1.CreateResponse;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.Header;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.After;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * The client against a Raft group of fake members ({@link FakeMember}): it finds the leader,
 * follows it across failovers, resends mutations with their request id, and never retries an
 * answer of the service; over callwire and over gRPC.
 */
@RunWith(Parameterized.class)
public class FailoverTest {
  /** The transports of the metadata calls: callwire, gRPC. */
  @Parameterized.Parameters(name = "callwire={0}")
  public static List<Object[]> transports() {
    return List.of(new Object[] {true}, new Object[] {false});
  }

  @Parameterized.Parameter
  public boolean callwire;

  /** The mutations a Batch can carry, whose first send is marked first_attempt. */
  private static final Set<String> BATCHABLE = Set.of("Mkdirs", "Create", "Complete", "Rename",
      "Delete");

  private final List<FakeMember> members = new ArrayList<>();
  private final List<StrataClient> clients = new ArrayList<>();
  private final StrataPath p = StrataPath.parse("strata://ns/dir/f");

  @After
  public void tearDown() throws Exception {
    for (StrataClient c : clients) {
      c.close();
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

  private StrataClient client(Duration retryTimeout, String... addresses) {
    StrataClient c = StrataClient.connect(ClientConfig.builder(String.join(",", addresses))
        .user("alice").rpcTimeout(Duration.ofSeconds(20)).retryTimeout(retryTimeout)
        .callwire(callwire).build());
    clients.add(c);
    return c;
  }

  private StrataClient client(String... addresses) {
    return client(Duration.ofSeconds(30), addresses);
  }

  @Test
  public void callsFindTheLeaderPastAFollowerAndADeadMember() throws Exception {
    FakeMember follower = member();
    follower.follow(null); // An election: it names no leader.
    String dead = FakeMember.deadAddress();
    FakeMember leader = member();
    StrataClient c = client(follower.address(), dead, leader.address());

    assertFalse(c.mkdirs(p, 0755, true)); // The fake's default answer: created = false.
    assertEquals(1, follower.received("Mkdirs").size());
    assertEquals(1, leader.received("Mkdirs").size());

    // The next call goes straight to the leader found.
    c.getFileStatus(p);
    assertEquals(1, follower.received().size());
    assertEquals(1, leader.received("GetFileStatus").size());
  }

  @Test
  public void aNamedLeaderIsCalledNextEvenIfNotListed() throws Exception {
    FakeMember leader = member();
    FakeMember follower = member();
    follower.follow(leader.address());
    String dead = FakeMember.deadAddress();
    // The leader is not in the list: members added later are found through the hint.
    StrataClient c = client(follower.address(), dead);

    c.getFileStatus(p);
    assertEquals(List.of("GetFileStatus"), methods(follower));
    assertEquals(List.of("GetFileStatus"), methods(leader));
  }

  @Test
  public void callsFollowTheLeaderAcrossAFailover() throws Exception {
    FakeMember a = member();
    FakeMember b = member();
    a.follow(b.address());
    StrataClient c = client(a.address(), b.address());
    c.setPermission(p, 0700);
    assertEquals(1, b.received("SetPermission").size());

    b.close(); // The leader dies; a wins the election.
    a.lead();
    c.setPermission(p, 0750);
    List<Received> onA = a.received("SetPermission");
    assertEquals(2, onA.size());
    c.setOwner(p, "bob", null);
    assertEquals(1, a.received("SetOwner").size());
  }

  private static Header header(Message r) {
    return (Header) r.getField(r.getDescriptorForType().findFieldByName("header"));
  }

  /** {@code r} as a resend carries it: first_attempt cleared. */
  private static Message resent(Message r) {
    return r.toBuilder().setField(r.getDescriptorForType().findFieldByName("header"),
        header(r).toBuilder().clearFirstAttempt().build()).build();
  }

  @Test
  public void everyMutationIsResentWithItsRequestIdAndReadsCarryNone() throws Exception {
    FakeMember m = member();
    m.answer("Create", req -> CreateResponse.newBuilder().setInlineLimit(4096)
        .setStatus(FileStatus.newBuilder().setInodeId(7)).build());
    StrataClient c = client(m.address());
    StrataPath q = StrataPath.parse("strata://ns/dir/g");

    // Each call's first attempt fails as a member that could not be reached does.
    Runnable failNext = () -> m.failNext(Status.UNAVAILABLE.withDescription("connection reset")
        .asException());
    failNext.run();
    c.mkdirs(p, 0755, true);
    failNext.run();
    FileWriter w = c.create(q, CreateOptions.defaults());
    w.write(new byte[] {1, 2, 3});
    failNext.run();
    w.close(); // Complete.
    failNext.run();
    c.rename(q, p, false, false);
    failNext.run();
    c.setPermission(p, 0700);
    failNext.run();
    c.setOwner(p, "bob", "staff");
    failNext.run();
    c.setTimes(p, 1, -1);
    failNext.run();
    c.recoverLease(p);
    failNext.run();
    c.delete(p, true);

    List<String> mutations = List.of("Mkdirs", "Create", "Complete", "Rename", "SetPermission",
        "SetOwner", "SetTimes", "RecoverLease", "Delete");
    Set<ByteString> ids = new HashSet<>();
    for (String method : mutations) {
      List<Received> rs = m.received(method);
      assertEquals(method, 2, rs.size());
      ByteString id = rs.get(0).requestId();
      assertEquals(method, MetaCaller.REQUEST_ID_BYTES, id.size());
      assertEquals(method + ": the retry has the first attempt's id", id, rs.get(1).requestId());
      assertEquals(method + ": a first send is marked as such if batchable",
          BATCHABLE.contains(method), header(rs.get(0).request()).getFirstAttempt());
      assertFalse(method + ": a resend is no first attempt",
          header(rs.get(1).request()).getFirstAttempt());
      assertEquals(method + ": the very same request, but for first_attempt",
          resent(rs.get(0).request()), rs.get(1).request());
      assertTrue(method + ": ids differ between mutations", ids.add(id));
    }

    failNext.run();
    c.getFileStatus(p);
    failNext.run();
    c.getContentSummary(p);
    failNext.run();
    c.list(p);
    failNext.run();
    c.open(p).close();
    for (String read : List.of("GetFileStatus", "GetContentSummary", "List", "Open")) {
      List<Received> rs = m.received(read);
      assertEquals(read, 2, rs.size());
      assertTrue(read, rs.get(0).requestId().isEmpty());
      assertTrue(read, rs.get(1).requestId().isEmpty());
    }
  }

  @Test
  public void aMutationWhoseAnswerNeverCameIsResentElsewhereWithItsId() throws Exception {
    FakeMember cutOff = member();
    cutOff.hang(); // Takes the call, never answers: applied or not, the client cannot tell.
    FakeMember leader = member();
    StrataClient c = StrataClient.connect(ClientConfig.builder(cutOff.address() + ","
        + leader.address()).user("alice").rpcTimeout(Duration.ofSeconds(2)).callwire(callwire)
        .build());
    clients.add(c);

    c.rename(p, StrataPath.parse("strata://ns/dir/h"), false, false);
    ByteString id = cutOff.received("Rename").get(0).requestId();
    assertEquals(MetaCaller.REQUEST_ID_BYTES, id.size());
    assertEquals(id, leader.received("Rename").get(0).requestId());
  }

  @Test
  public void fileSystemAnswersAreNotRetried() throws Exception {
    FakeMember leader = member();
    FakeMember other = member();
    leader.answer("GetFileStatus", req -> FakeMember.strataStatus(Code.NOT_FOUND, "NOT_FOUND",
        "get file status /dir/f: no such file or directory", Map.of()));
    leader.answer("Mkdirs", req -> FakeMember.strataStatus(Code.FAILED_PRECONDITION,
        "PARENT_NOT_DIRECTORY", "mkdirs /dir/f: /dir is not a directory", Map.of()));
    leader.answer("SetTimes", req -> Status.INTERNAL.withDescription("disk on fire")
        .asException());
    StrataClient c = client(leader.address(), other.address());

    assertThrows(FileNotFoundException.class, () -> c.getFileStatus(p));
    assertThrows(StrataException.class, () -> c.mkdirs(p, 0755, true));
    IOException e = assertThrows(IOException.class, () -> c.setTimes(p, 1, 1));
    assertTrue(e.getMessage(), e.getMessage().contains("disk on fire"));
    assertEquals(List.of("GetFileStatus", "Mkdirs", "SetTimes"), methods(leader));
    assertEquals(List.of(), methods(other));
  }

  @Test
  public void noLeaderBeforeTheRetryDeadlineNamesEveryMemberTried() throws Exception {
    FakeMember follower = member();
    follower.follow(null);
    String dead = FakeMember.deadAddress();
    // The deadline leaves a cold JVM time to open its first channels: a shorter one can
    // pass before the second member was ever asked.
    StrataClient c = client(Duration.ofSeconds(3), dead, follower.address());

    NotLeaderException e = assertThrows(NotLeaderException.class, () -> c.mkdirs(p, 0755, true));
    String m = e.getMessage();
    assertTrue(m, m.startsWith("mkdirs strata://ns/dir/f: found no leader of the Strata "
        + "namespace service; tried " + dead + " ("));
    assertTrue(m, m.contains(follower.address() + " (not the leader, and it knows of none)"));
    assertTrue(m, m.contains(" attempts in "));
    // Every attempt was the same mutation.
    assertEquals(1, follower.received("Mkdirs").stream().map(Received::requestId).distinct()
        .count());
  }

  @Test
  public void anUnreachableServiceIsReportedWithWhatEachMemberSaid() throws Exception {
    String dead1 = FakeMember.deadAddress();
    String dead2 = FakeMember.deadAddress();
    StrataClient c = client(Duration.ofSeconds(3), dead1, dead2);
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
        () -> c.getFileStatus(p));
    assertFalse(e instanceof NotLeaderException);
    assertTrue(e.getMessage(), e.getMessage().contains("cannot reach the Strata namespace "
        + "service at " + dead1 + " ("));
    assertTrue(e.getMessage(), e.getMessage().contains(dead2 + " ("));
  }

  @Test
  public void aSingleAttemptThatTimesOutIsATimeout() throws Exception {
    FakeMember m = member();
    m.hang();
    StrataClient c = StrataClient.connect(ClientConfig.builder(m.address()).user("alice")
        .rpcTimeout(Duration.ofSeconds(2)).retryTimeout(Duration.ZERO).callwire(callwire)
        .build());
    clients.add(c);
    SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
        () -> c.getFileStatus(p));
    assertTrue(e.getMessage(), e.getMessage().contains(m.address() + " (no answer in time)"));
    assertEquals(1, m.received().size());
  }

  @Test
  public void leaseRenewalsFollowTheLeader() throws Exception {
    FakeMember a = member();
    FakeMember b = member();
    a.follow(b.address());
    StrataClient c = StrataClient.connect(ClientConfig.builder(a.address() + "," + b.address())
        .user("alice").leaseRenewInterval(Duration.ofMillis(20)).callwire(callwire).build());
    clients.add(c);
    FileWriter w = c.create(p, CreateOptions.defaults());
    b.awaitRequest("RenewLease");

    b.close();
    a.lead();
    a.awaitRequest("RenewLease");
    // The member has the request; its answer reaches the renewer a moment
    // later (the renewer counts answered renewals).
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (c.leaseRenewals() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(1); // polling the renewer's counter, not synchronising
    }
    assertNotEquals(0, c.leaseRenewals());
    w.close();
  }

  private static List<String> methods(FakeMember m) {
    return m.received().stream().map(Received::method).toList();
  }
}
