package io.strata.core.rpc;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.google.rpc.Code;
import io.strata.core.error.NotLeaderException;
import io.strata.core.error.Op;
import io.strata.core.error.Reason;
import io.strata.core.error.StrataError;
import io.strata.core.error.StrataException;
import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.testing.FakeMember;
import io.strata.core.testing.FakeMember.Received;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.BatchRequest;
import io.strata.proto.v1.BatchResult;
import io.strata.proto.v1.DeleteRequest;
import io.strata.proto.v1.DeleteResponse;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.GetFileStatusRequest;
import io.strata.proto.v1.GetFileStatusResponse;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.MkdirsRequest;
import io.strata.proto.v1.MkdirsResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * {@link Coalescer} against a fake member that holds the calls to "/held..." until the test
 * releases them: with one RPC allowed in flight, a held call alone keeps the place, the calls
 * made meanwhile queue, and the test sees what leaves together and what each caller gets; over
 * gRPC and over callwire.
 */
@RunWith(Parameterized.class)
public class CoalescerTest {
  /** The transports: gRPC, callwire. */
  @Parameterized.Parameters(name = "callwire={0}")
  public static List<Object[]> transports() {
    return List.of(new Object[] {false}, new Object[] {true});
  }

  @Parameterized.Parameter
  public boolean callwire;

  private static final Duration BOUND = Duration.ofSeconds(30);
  private static final AtomicLong TESTS = new AtomicLong();

  /** The sender threads' name, this test's own. */
  private final String senders = "strata-batch-test" + TESTS.incrementAndGet();

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final CountDownLatch hold = new CountDownLatch(1);
  private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();
  private final List<Caller> callers = new ArrayList<>();
  private FakeMember member;
  private MetaCaller meta;
  private Coalescer coalescer;

  @Before
  public void setUp() throws IOException {
    member = FakeMember.start();
    member.answer("GetFileStatus", req -> {
      String path = ((GetFileStatusRequest) req).getPath();
      held(path);
      if (path.contains("missing")) {
        return FakeMember.strataStatus(Code.NOT_FOUND, "NOT_FOUND",
            "get file status " + path + ": no such file or directory", Map.of());
      }
      return GetFileStatusResponse.newBuilder().setStatus(FileStatus.newBuilder().setName(path))
          .build();
    });
    member.answer("Mkdirs", req -> {
      String path = ((MkdirsRequest) req).getPath();
      held(path);
      if (path.equals("/exists")) {
        return FakeMember.strataStatus(Code.ALREADY_EXISTS, "ALREADY_EXISTS",
            "mkdirs /exists: file exists", Map.of());
      }
      if (path.equals("/moved") && failedOnce.add(path)) {
        return FakeMember.notLeader(""); // It lost the lead midway, then led again.
      }
      return MkdirsResponse.newBuilder().setCreated(true).build();
    });
    // A fake clock that only the pauses between rounds move: retries take no time.
    meta = new MetaCaller(List.of(HostPort.parse(member.address())), Duration.ofSeconds(20),
        Duration.ofSeconds(2), Duration.ofSeconds(2), MetaCallerTest.dial(callwire), now::get,
        now::addAndGet);
    coalescer = new Coalescer(meta, 1, senders);
  }

  @After
  public void tearDown() throws Exception {
    hold.countDown();
    for (Caller c : callers) {
      c.thread.join(BOUND.toMillis());
    }
    coalescer.close();
    meta.close();
    member.close();
  }

  private void held(String path) {
    if (path.startsWith("/held")) {
      try {
        assertTrue(hold.await(BOUND.toSeconds(), TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A thread making one call through the coalescer. */
  private final class Caller {
    final CompletableFuture<BatchResult> answer = new CompletableFuture<>();
    final Thread thread;

    Caller(Op op, String path, BatchCall call) {
      thread = new Thread(() -> {
        try {
          answer.complete(coalescer.call(op, path, call));
        } catch (Throwable t) {
          answer.completeExceptionally(t);
        }
      });
      thread.start();
      callers.add(this);
    }

    BatchResult get() throws Exception {
      try {
        return answer.get(BOUND.toSeconds(), TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        throw (Exception) e.getCause();
      }
    }
  }

  private static BatchCall stat(String path) {
    return BatchCall.newBuilder().setGetFileStatus(GetFileStatusRequest.newBuilder()
        .setPath(path)).build();
  }

  private static BatchCall mkdirs(String path) {
    return BatchCall.newBuilder().setMkdirs(MkdirsRequest.newBuilder().setPath(path)
        .setHeader(Header.newBuilder().setRequestId(MetaCaller.newRequestId()))).build();
  }

  private static BatchCall delete(String path) {
    return BatchCall.newBuilder().setDelete(DeleteRequest.newBuilder().setPath(path)
        .setHeader(Header.newBuilder().setRequestId(MetaCaller.newRequestId()))).build();
  }

  /**
   * Starts a call that holds the one place in flight until {@link #hold} opens, and waits until
   * the member holds it.
   */
  private Caller holdThePlace(Op op, BatchCall call) throws Exception {
    Caller first = new Caller(op, "/held", call);
    coalescer.awaitState(0, 1, BOUND);
    String method = call.getCallCase() == BatchCall.CallCase.MKDIRS ? "Mkdirs" : "GetFileStatus";
    member.awaitRequest(method);
    return first;
  }

  /**
   * Waits until {@code queued} calls wait behind the held one, then releases it; returns its
   * answer.
   */
  private BatchResult release(int queued, Caller first) throws Exception {
    coalescer.awaitState(queued, 1, BOUND);
    assertEquals(List.of(), member.received("Batch"));
    hold.countDown();
    return first.get();
  }

  /**
   * Makes {@code calls} behind a held mkdirs, each on a thread of its own, and releases it once
   * they all wait; returns their callers.
   */
  private List<Caller> behindAHeldCall(Call... calls) throws Exception {
    Caller first = holdThePlace(Op.MKDIRS, mkdirs("/held"));
    List<Caller> queued = new ArrayList<>();
    for (Call c : calls) {
      queued.add(new Caller(c.op(), c.path(), c.call()));
    }
    release(calls.length, first);
    return queued;
  }

  /** A call to make: its operation, the path its errors name, and the call. */
  private record Call(Op op, String path, BatchCall call) {}

  private List<BatchCall> batch(int i) {
    return ((BatchRequest) member.received("Batch").get(i).request()).getCallsList();
  }

  @Test
  public void callsMadeWhileMaxAreInFlightLeaveTogetherInOneBatch() throws Exception {
    Caller first = holdThePlace(Op.GET_FILE_STATUS, stat("/held"));
    List<String> paths = List.of("/a", "/missing", "/b", "/c");
    List<Caller> queued = new ArrayList<>();
    for (String p : paths) {
      queued.add(new Caller(Op.GET_FILE_STATUS, p, stat(p)));
    }
    assertEquals("/held",
        release(paths.size(), first).getGetFileStatus().getStatus().getName());
    for (int i = 0; i < paths.size(); i++) {
      String p = paths.get(i);
      if (p.equals("/missing")) {
        StrataFileNotFoundException e = assertThrows(StrataFileNotFoundException.class,
            queued.get(i)::get);
        assertEquals(Reason.NOT_FOUND, e.reason());
      } else {
        assertEquals(p, queued.get(i).get().getGetFileStatus().getStatus().getName());
      }
    }
    assertEquals(1, member.received("GetFileStatus").size());
    assertEquals(1, member.received("Batch").size());
    // The callers queued in whatever order their threads ran.
    assertEquals(paths.stream().sorted().toList(),
        batch(0).stream().map(c -> c.getGetFileStatus().getPath()).sorted().toList());
    assertEquals(1, coalescer.batchesSent());

    // The batch's place is free once its sender is done: a lone call goes alone again.
    coalescer.awaitState(0, 0, BOUND);
    coalescer.call(Op.GET_FILE_STATUS, "/after", stat("/after"));
    assertEquals(2, member.received("GetFileStatus").size());
  }

  @Test
  public void errorsInABatchAreTheErrorsOfTheCallAlone() throws Exception {
    List<Caller> queued = behindAHeldCall(
        new Call(Op.MKDIRS, "strata://ns/exists", mkdirs("/exists")),
        new Call(Op.GET_FILE_STATUS, "strata://ns/missing", stat("/missing")));
    StrataException batchedExists = assertThrows(StrataException.class, queued.get(0)::get);
    StrataFileNotFoundException batchedMissing = assertThrows(
        StrataFileNotFoundException.class, queued.get(1)::get);
    assertEquals(1, member.received("Batch").size());

    coalescer.awaitState(0, 0, BOUND);
    StrataException aloneExists = assertThrows(StrataException.class,
        () -> coalescer.call(Op.MKDIRS, "strata://ns/exists", mkdirs("/exists")));
    StrataFileNotFoundException aloneMissing = assertThrows(StrataFileNotFoundException.class,
        () -> coalescer.call(Op.GET_FILE_STATUS, "strata://ns/missing", stat("/missing")));
    assertEquals(1, member.received("Batch").size());
    assertSameError(aloneExists, batchedExists);
    assertSameError(aloneMissing, batchedMissing);
    assertEquals(Reason.ALREADY_EXISTS, batchedExists.reason());
  }

  private static <E extends Exception & StrataError> void assertSameError(E alone, E batched) {
    assertEquals(alone.getClass(), batched.getClass());
    assertEquals(alone.getMessage(), batched.getMessage());
    assertEquals(alone.reason(), batched.reason());
    assertEquals(alone.op(), batched.op());
    assertEquals(alone.path(), batched.path());
  }

  @Test
  public void aCallThatMetUnavailableInABatchIsMadeAgainAloneWithItsRequestId() throws Exception {
    List<Caller> queued = behindAHeldCall(new Call(Op.MKDIRS, "/new", mkdirs("/new")),
        new Call(Op.MKDIRS, "/moved", mkdirs("/moved")));
    assertTrue(queued.get(0).get().getMkdirs().getCreated());
    assertTrue(queued.get(1).get().getMkdirs().getCreated());
    assertEquals(1, member.received("Batch").size());
    List<Received> alone = member.received("Mkdirs");
    assertEquals(2, alone.size());
    MkdirsRequest retried = (MkdirsRequest) alone.get(1).request();
    MkdirsRequest batched = batch(0).stream().map(BatchCall::getMkdirs)
        .filter(m -> m.getPath().equals("/moved")).findFirst().orElseThrow();
    assertEquals("/moved", retried.getPath());
    assertEquals(batched.getHeader().getRequestId(), retried.getHeader().getRequestId());
    // First sends are marked as such, alone or batched; the call made again is not.
    assertTrue(((MkdirsRequest) alone.get(0).request()).getHeader().getFirstAttempt());
    assertTrue(batched.getHeader().getFirstAttempt());
    assertFalse(retried.getHeader().getFirstAttempt());
  }

  @Test
  public void aFailedBatchFailsEachCallerWordedForItsOwnCall() throws Exception {
    Caller first = holdThePlace(Op.MKDIRS, mkdirs("/held"));
    member.follow(null); // The held call was taken as leader; the batch finds no leader.
    Caller made = new Caller(Op.MKDIRS, "strata://ns/a", mkdirs("/a"));
    Caller deleted = new Caller(Op.DELETE, "strata://ns/b", delete("/b"));
    release(2, first);
    NotLeaderException a = assertThrows(NotLeaderException.class, made::get);
    NotLeaderException b = assertThrows(NotLeaderException.class, deleted::get);
    assertTrue(a.getMessage(), a.getMessage().startsWith(
        "mkdirs strata://ns/a: found no leader of the Strata namespace service; tried "));
    assertTrue(b.getMessage(), b.getMessage().startsWith(
        "delete strata://ns/b: found no leader of the Strata namespace service; tried "));
    assertEquals(Op.DELETE, b.op());
    assertEquals("strata://ns/b", b.path());
    // One batch, sent again and again, the very same requests but for first_attempt, which
    // only the first send has.
    List<Received> sent = member.received("Batch");
    assertTrue(sent.size() > 2);
    List<BatchRequest> requests = sent.stream().map(r -> (BatchRequest) r.request()).toList();
    assertEquals(1, requests.stream().skip(1).distinct().count());
    BatchRequest firstSend = requests.get(0);
    BatchRequest again = requests.get(1);
    assertEquals(2, firstSend.getCallsCount());
    for (int i = 0; i < firstSend.getCallsCount(); i++) {
      Header h1 = header(firstSend.getCalls(i));
      Header h2 = header(again.getCalls(i));
      assertTrue(h1.getFirstAttempt());
      assertFalse(h2.getFirstAttempt());
      assertEquals(h1.toBuilder().setFirstAttempt(false).build(), h2);
    }
    assertEquals(1, coalescer.batchesSent());
  }

  private static Header header(BatchCall c) {
    return c.hasMkdirs() ? c.getMkdirs().getHeader() : c.getDelete().getHeader();
  }

  @Test
  public void aCallerInterruptedWhileQueuedGivesUpAndItsCallNeverLeaves() throws Exception {
    Caller first = holdThePlace(Op.GET_FILE_STATUS, stat("/held"));
    Caller gaveUp = new Caller(Op.GET_FILE_STATUS, "/given-up", stat("/given-up"));
    coalescer.awaitState(1, 1, BOUND);
    gaveUp.thread.interrupt();
    InterruptedIOException e = assertThrows(InterruptedIOException.class, gaveUp::get);
    assertEquals("get_file_status /given-up: interrupted while waiting for its batch",
        e.getMessage());
    coalescer.awaitState(0, 1, BOUND);

    Caller kept = new Caller(Op.GET_FILE_STATUS, "/kept", stat("/kept"));
    release(1, first);
    assertEquals("/kept", kept.get().getGetFileStatus().getStatus().getName());
    assertEquals(1, member.received("Batch").size());
    assertEquals(List.of("/kept"),
        batch(0).stream().map(c -> c.getGetFileStatus().getPath()).toList());
    // A read has no request id, and no first attempt to mark.
    assertEquals(Header.getDefaultInstance(), batch(0).get(0).getGetFileStatus().getHeader());
  }

  @Test
  public void closeFailsTheQueuedCallsAndStopsTheSenders() throws Exception {
    // A first batch, so that a sender thread exists.
    CountDownLatch firstHold = new CountDownLatch(1);
    member.answer("Delete", req -> {
      try {
        assertTrue(firstHold.await(BOUND.toSeconds(), TimeUnit.SECONDS));
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
      }
      return DeleteResponse.newBuilder().setDeleted(true).build();
    });
    Caller lone = new Caller(Op.DELETE, "/x", delete("/x"));
    coalescer.awaitState(0, 1, BOUND);
    Caller batched = new Caller(Op.DELETE, "/y", delete("/y"));
    coalescer.awaitState(1, 1, BOUND);
    firstHold.countDown();
    lone.get();
    batched.get();
    coalescer.awaitState(0, 0, BOUND);
    List<Thread> threads = Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(senders + "-")).toList();
    assertEquals(1, threads.size());

    Caller first = holdThePlace(Op.GET_FILE_STATUS, stat("/held"));
    Caller q1 = new Caller(Op.GET_FILE_STATUS, "/q1", stat("/q1"));
    Caller q2 = new Caller(Op.GET_FILE_STATUS, "/q2", stat("/q2"));
    coalescer.awaitState(2, 1, BOUND);
    coalescer.close();
    IOException e1 = assertThrows(IOException.class, q1::get);
    assertEquals("get_file_status /q1: the Strata client is closed", e1.getMessage());
    assertThrows(IOException.class, q2::get);
    IOException after = assertThrows(IOException.class,
        () -> coalescer.call(Op.GET_FILE_STATUS, "/after", stat("/after")));
    assertEquals("get_file_status /after: the Strata client is closed", after.getMessage());

    hold.countDown();
    assertEquals("/held", first.get().getGetFileStatus().getStatus().getName());
    for (Thread t : threads) {
      t.join(BOUND.toMillis());
      assertFalse(t.getName() + " still runs", t.isAlive());
    }
    assertEquals(1, member.received("Batch").size());
  }
}
