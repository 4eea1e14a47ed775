package io.strata.core.rpc;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.strata.core.error.ErrorTranslator;
import io.strata.core.testing.FakeCallwire;
import io.strata.core.testing.FakeMember;
import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.GetFileStatusRequest;
import io.strata.proto.v1.GetFileStatusResponse;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.junit.After;
import org.junit.Test;

/**
 * {@link CallSocket} against a callwire server in Java ({@link FakeCallwire}) that answers as
 * each test scripts: the frames it writes, the pool of connections, and each way a call fails,
 * as the StatusRuntimeException a gRPC call would have thrown.
 */
public class CallSocketTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  /** What the server does with the next request: answer it as asked, or hang. */
  private final AtomicReference<FakeCallwire.Handler> next = new AtomicReference<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private FakeCallwire server;
  private CallSocket socket;

  @After
  public void tearDown() throws Exception {
    release.countDown();
    if (socket != null) {
      socket.shutdown();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A server that answers each request with the status named after its path. */
  private CallSocket start(String token) throws Exception {
    server = FakeCallwire.start((r, out) -> {
      FakeCallwire.Handler h = next.getAndSet(null);
      if (h != null) {
        h.handle(r, out);
        return;
      }
      String path = GetFileStatusRequest.parseFrom(r.message()).getPath();
      FakeCallwire.message(out, GetFileStatusResponse.newBuilder()
          .setStatus(FileStatus.newBuilder().setName(path)).build().toByteArray());
    });
    socket = new CallSocket(HostPort.parse(server.address()), Tls.plaintext(), token);
    return socket;
  }

  private static String getFileStatus(CallSocket s, String path, long timeoutNanos) {
    return s.call(MetaServiceGrpc.getGetFileStatusMethod(),
        GetFileStatusRequest.newBuilder().setPath(path).build(), timeoutNanos)
        .getStatus().getName();
  }

  private static <T extends Throwable> T causeOf(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + e, e);
  }

  @Test
  public void sequentialCallsShareOneConnectionAndSayWhatTheSpecSays() throws Exception {
    CallSocket s = start("the-token");
    for (int i = 0; i < 5; i++) {
      assertEquals("/f" + i, getFileStatus(s, "/f" + i, 10 * SECOND));
    }
    assertEquals(1, server.connections());
    assertEquals(1, s.dialled());
    assertTrue(s.connected());
    List<FakeCallwire.Request> got = server.received();
    assertEquals(5, got.size());
    for (int i = 0; i < 5; i++) {
      FakeCallwire.Request r = got.get(i);
      assertEquals("the-token", r.token());
      assertEquals("/strata.v1.MetaService/GetFileStatus", r.method());
      assertTrue(r.timeoutNanos() + " in (0, 10 s]",
          r.timeoutNanos() > 0 && r.timeoutNanos() <= 10 * SECOND);
      assertArrayEquals(GetFileStatusRequest.newBuilder().setPath("/f" + i).build().toByteArray(),
          r.message());
    }
  }

  @Test
  public void noTokenIsAnEmptyHelloAndNoDeadlineIsZero() throws Exception {
    CallSocket s = start(null);
    getFileStatus(s, "/a", 0);
    assertEquals("", server.received().get(0).token());
    assertEquals(0, server.received().get(0).timeoutNanos());
  }

  @Test
  public void aStatusAnswerIsTheCallsStatusAndKeepsTheConnection() throws Exception {
    CallSocket s = start(null);
    com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
        .setCode(Status.Code.NOT_FOUND.value()).setMessage("get file status /a: no such file")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setDomain("strata.io")
            .setReason("NOT_FOUND").build()))
        .build();
    next.set((r, out) -> FakeCallwire.status(out, st));
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    assertEquals(st, StatusProto.fromThrowable(e));
    assertEquals("/b", getFileStatus(s, "/b", 10 * SECOND));
    assertEquals(1, server.connections());
  }

  @Test
  public void anUnavailableAnswerClosesTheConnection() throws Exception {
    CallSocket s = start(null);
    next.set((r, out) -> FakeCallwire.status(out,
        StatusProto.fromThrowable(FakeMember.notLeader("10.0.0.1:7700"))));
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(java.util.Optional.of("10.0.0.1:7700"), ErrorTranslator.leaderOf(e));
    assertEquals("/b", getFileStatus(s, "/b", 10 * SECOND));
    assertEquals(2, server.connections());
  }

  /** Each way of breaking the wire format: UNAVAILABLE "malformed answer", a new connection. */
  @Test
  public void aMalformedAnswerIsUnavailableAndClosesTheConnection() throws Exception {
    CallSocket s = start(null);
    List<FakeCallwire.Handler> bad = List.of(
        (r, out) -> FakeCallwire.frame(out, 7, new byte[3]),
        (r, out) -> out.write(new byte[] {0, 0, 0, 0, 0}),
        (r, out) -> out.write(ByteBuffer.allocate(5).putInt(CallSocket.MAX_FRAME + 1).array()),
        (r, out) -> FakeCallwire.message(out, new byte[] {(byte) 0xff, (byte) 0xff}),
        (r, out) -> FakeCallwire.frame(out, 1, new byte[] {(byte) 0xff}));
    int conns = 1;
    for (FakeCallwire.Handler h : bad) {
      next.set(h);
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertTrue(e.getStatus().getDescription(),
          e.getStatus().getDescription().contains("malformed answer"));
      assertEquals("/b", getFileStatus(s, "/b", 10 * SECOND));
      assertEquals(++conns, server.connections());
    }
  }

  @Test
  public void anEndOfStreamMidwayIsUnavailableWithItsCause() throws Exception {
    CallSocket s = start(null);
    next.set((r, out) -> {
      out.write(ByteBuffer.allocate(15).putInt(100).put((byte) 0).array());
      throw new java.io.IOException("gone"); // The server closes the connection.
    });
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertNotNull(causeOf(e, EOFException.class));

    next.set((r, out) -> {
      throw new java.io.IOException("gone"); // Closed before any answer.
    });
    e = assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertNotNull(causeOf(e, EOFException.class));
    assertTrue(ErrorTranslator.retryable(e));
  }

  /** One transport failure drops the idle connections: they would each fail a retry. */
  /**
   * Starts a server whose first two calls wait for each other, and a client of it whose pool's
   * idle times are on {@code clock}, and makes those two calls (/a and /b) at once: two
   * connections, both idle after.
   */
  private CallSocket twoIdleConnections(LongSupplier clock) throws Exception {
    CountDownLatch both = new CountDownLatch(2);
    server = FakeCallwire.start((r, out) -> {
      if (both.getCount() > 0) {
        both.countDown();
        both.await();
      }
      FakeCallwire.message(out, GetFileStatusResponse.getDefaultInstance().toByteArray());
    });
    CallSocket s = socket =
        new CallSocket(HostPort.parse(server.address()), Tls.plaintext(), null, clock);
    CompletableFuture<String> other =
        CompletableFuture.supplyAsync(() -> getFileStatus(s, "/b", 10 * SECOND));
    getFileStatus(s, "/a", 10 * SECOND);
    other.get();
    assertEquals(2, server.connections());
    return s;
  }

  @Test
  public void aLostConnectionDropsTheIdleOnes() throws Exception {
    CallSocket s = twoIdleConnections(System::nanoTime);
    server.dropConnections(); // The service restarted.
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/c", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    getFileStatus(s, "/d", 10 * SECOND); // On a new connection, not the other dead one.
    assertEquals(3, server.connections());
  }

  @Test
  public void connectionsIdleForAMinuteAreClosedTheOldestFirst() throws Exception {
    AtomicLong now = new AtomicLong();
    CallSocket s = twoIdleConnections(now::get); // Both given back at 0.

    now.set(CallSocket.IDLE_NANOS - SECOND);
    getFileStatus(s, "/c", 10 * SECOND); // Takes the one given back last, and gives it back.
    int fresh = server.received().get(2).connection();
    now.set(CallSocket.IDLE_NANOS);
    getFileStatus(s, "/d", 10 * SECOND); // The other is a minute idle: closed, not taken.
    assertEquals(2, s.dialled());
    assertEquals(fresh, server.received().get(3).connection());

    now.addAndGet(CallSocket.IDLE_NANOS);
    getFileStatus(s, "/e", 10 * SECOND); // None left that is not a minute idle: it dials.
    assertEquals(3, s.dialled());
    assertEquals(3, server.received().get(4).connection());
  }

  @Test
  public void nothingListeningIsUnavailableWithConnectionRefused() throws Exception {
    CallSocket s = new CallSocket(HostPort.parse(FakeMember.deadAddress()), Tls.plaintext(), null);
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertEquals("Connection refused", ErrorTranslator.outcome(e));
    assertNotNull(causeOf(e, ConnectException.class));
    assertTrue(!s.connected());
  }

  /** The socket's read timeout works on this JDK's SocketChannel adaptor (else: no end). */
  @Test(timeout = 60_000)
  public void noAnswerByTheDeadlineIsDeadlineExceededAndClosesTheConnection() throws Exception {
    CallSocket s = start(null);
    next.set((r, out) -> release.await());
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
        () -> getFileStatus(s, "/a", SECOND / 5));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
    assertNotNull(causeOf(e, SocketTimeoutException.class));
    assertEquals("/b", getFileStatus(s, "/b", 10 * SECOND));
    assertEquals(2, server.connections());
  }

  /**
   * An interrupt closes the SocketChannel under a blocked read on this JDK: the call ends at
   * once, CANCELLED as gRPC's interrupted calls, and the thread stays interrupted.
   */
  @Test(timeout = 60_000)
  public void anInterruptEndsABlockedCall() throws Exception {
    CallSocket s = start(null);
    next.set((r, out) -> release.await());
    CompletableFuture<Throwable> failed = new CompletableFuture<>();
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        getFileStatus(s, "/a", 1000 * SECOND);
        failed.complete(null);
      } catch (Throwable e) {
        failed.complete(e);
      }
      interrupted.complete(Thread.currentThread().isInterrupted());
    });
    t.start();
    server.awaitRequests(1);
    t.interrupt();
    t.join();
    StatusRuntimeException e = (StatusRuntimeException) failed.get();
    assertEquals(Status.Code.CANCELLED, e.getStatus().getCode());
    assertNotNull(causeOf(e, ClosedByInterruptException.class));
    assertTrue(interrupted.get());
    assertTrue(!ErrorTranslator.retryable(e));
    assertEquals("/b", getFileStatus(s, "/b", 10 * SECOND));
    assertEquals(2, server.connections());
  }

  @Test
  public void aTlsClientOfAPlaintextServiceIsToldItDoesNotSpeakTls() throws Exception {
    start(null);
    CallSocket s = new CallSocket(HostPort.parse(server.address()), Tls.systemRoots(), null);
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertTrue(ErrorTranslator.outcome(e),
        ErrorTranslator.outcome(e).startsWith("it does not speak TLS"));
  }

  @Test
  public void aShutdownSocketCallsNoMore() throws Exception {
    CallSocket s = start(null);
    getFileStatus(s, "/a", 10 * SECOND);
    s.shutdown();
    StatusRuntimeException e =
        assertThrows(StatusRuntimeException.class, () -> getFileStatus(s, "/a", 10 * SECOND));
    assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
    assertEquals(1, server.connections());
  }
}
