package io.strata.core.testing;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.BatchRequest;
import io.strata.proto.v1.BatchResponse;
import io.strata.proto.v1.BatchResult;
import io.strata.proto.v1.Header;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A stand-in for one member of the namespace service's Raft group, serving MetaService on
 * loopback (a real gRPC server: the client under test dials it as it dials a real member). As a
 * leader it answers every call with the response's default instance, or what {@link #answer}
 * scripts; as a follower it answers every call NOT_LEADER, naming the leader or none, as the Go
 * service does (internal/fserr). A Batch it answers call by call, each as if it came alone (the
 * scripted answer of its method, a failure in the call's result), as the service does. It records
 * every request it receives, in order (a Batch as one). It serves the same calls over callwire
 * ({@link FakeCallwire}), on the same port, as the service does. Safe for concurrent use.
 */
public final class FakeMember implements AutoCloseable {
  /** One request received: the method's bare name ("Mkdirs") and the request. */
  public record Received(String method, Message request) {
    /** The request's Header.request_id (empty for requests without a header or an id). */
    public ByteString requestId() {
      var f = request.getDescriptorForType().findFieldByName("header");
      if (f == null || !request.hasField(f)) {
        return ByteString.EMPTY;
      }
      return ((Header) request.getField(f)).getRequestId();
    }
  }

  /** What {@link #answerOf} returns for a call never to be answered. */
  private static final Object HANG = new Object();

  /**
   * What an {@link #answer} function returns to drop the call: the member closes every
   * connection it has instead of answering, and its client sees the connection fail mid-call.
   */
  public static final Object DROP = new Object();

  private final Server server;
  private final String address;
  private final FakeCallwire callwire;

  private final Object mu = new Object();
  // Guarded by mu.
  private boolean leading = true;
  private String leaderHint = "";
  private boolean hanging;
  private final Deque<StatusException> failures = new ArrayDeque<>();
  private final Map<String, Function<Message, Object>> answers = new HashMap<>();
  private final List<Received> received = new ArrayList<>();
  /** Told of every request received, in the member's lock (a log of several members'). */
  private volatile java.util.function.Consumer<Received> onReceive = r -> {};

  private FakeMember() throws IOException {
    NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0));
    b.addService(service());
    server = b.build().start();
    callwire = FakeCallwire.start(this::handleCallwire, this::toGrpc);
    address = callwire.address();
  }

  /**
   * Serves a gRPC connection, {@code s}, whose {@code first} bytes were read: through the
   * member's gRPC server, on a port of its own, the bytes copied both ways until either side
   * closes. (The real service serves both transports on one port; so does the fake, this way.)
   */
  private void toGrpc(java.net.Socket s, byte[] first) throws IOException {
    try (java.net.Socket g = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(),
        server.getPort())) {
      callwire.track(g);
      g.setTcpNoDelay(true);
      s.setTcpNoDelay(true);
      g.getOutputStream().write(first);
      Thread back = new Thread(() -> copy(g, s), "fake-member-grpc");
      back.setDaemon(true);
      back.start();
      copy(s, g);
      try {
        back.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Copies what {@code from} reads to {@code to} until either ends; then closes both. */
  private static void copy(java.net.Socket from, java.net.Socket to) {
    try {
      from.getInputStream().transferTo(to.getOutputStream());
    } catch (IOException e) {
      // One side is gone.
    } finally {
      try {
        from.close();
        to.close();
      } catch (IOException e) {
        // Nothing to do.
      }
    }
  }

  /** Number of callwire connections the member accepted. */
  public int callwireConnections() {
    return callwire.connections();
  }

  /** Starts a member that leads. */
  public static FakeMember start() throws IOException {
    return new FakeMember();
  }

  /** A loopback host:port nothing listens on (a member that is down). */
  public static String deadAddress() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  /** The member's host:port. */
  public String address() {
    return address;
  }

  /** Tells {@code f} of every request the member receives from now on, in order. */
  public void onReceive(java.util.function.Consumer<Received> f) {
    onReceive = f;
  }

  /** Closes the member's connections and port: connections are refused, until {@link #up}. */
  public void refuse() throws IOException {
    callwire.refuse();
  }

  /**
   * Closes the member's connections, then takes each new one only to close it (a member going
   * down), until {@link #up}; {@link #awaitTried} counts them.
   */
  public void down() throws IOException {
    callwire.down();
  }

  /** Serves again, on the same port. */
  public void up() throws IOException {
    callwire.up();
  }

  /** Waits until {@code n} connections came while down (a bound of 30 s for a broken test). */
  public void awaitTried(int n) throws InterruptedException {
    callwire.awaitTried(n);
  }

  /** Makes the member lead: it answers calls. */
  public void lead() {
    synchronized (mu) {
      leading = true;
      hanging = false;
    }
  }

  /** Makes the member follow: it answers NOT_LEADER naming {@code leader} (null: none). */
  public void follow(String leader) {
    synchronized (mu) {
      leading = false;
      hanging = false;
      leaderHint = leader == null ? "" : leader;
    }
  }

  /** Makes the member take calls and never answer them (a member cut off mid-call). */
  public void hang() {
    synchronized (mu) {
      hanging = true;
    }
  }

  /** Fails the next call, whatever the role, with {@code e}. */
  public void failNext(StatusException e) {
    synchronized (mu) {
      failures.add(e);
    }
  }

  /**
   * Answers calls of {@code method} (bare name, "Mkdirs") with what {@code f} returns for the
   * request: a response message, or a StatusException to fail the call with. {@code f} runs on
   * the server's threads, outside the member's lock: it may block, to hold calls in flight.
   */
  public void answer(String method, Function<Message, Object> f) {
    synchronized (mu) {
      answers.put(method, f);
    }
  }

  /** Every request received so far, in order. */
  public List<Received> received() {
    synchronized (mu) {
      return List.copyOf(received);
    }
  }

  /** The requests of {@code method} received so far, in order. */
  public List<Received> received(String method) {
    return received().stream().filter(r -> r.method().equals(method)).toList();
  }

  /**
   * Waits until the member has received a request of {@code method}; fails after 30 s (a bound
   * for a broken test, not a synchronisation).
   */
  public void awaitRequest(String method) throws InterruptedException {
    awaitRequests(method, 1);
  }

  /**
   * Waits until the member has received {@code n} requests of {@code method}; fails after 30 s
   * (a bound for a broken test, not a synchronisation).
   */
  public void awaitRequests(String method, int n) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    synchronized (mu) {
      while (received.stream().filter(r -> r.method().equals(method)).count() < n) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(address + " received fewer than " + n + " " + method + ": "
              + received);
        }
        TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
    }
  }

  /** A status as the service sends it: {@code code} with a Strata ErrorInfo. */
  public static StatusException strataStatus(Code code, String reason, String message,
      Map<String, String> metadata) {
    ErrorInfo info = ErrorInfo.newBuilder().setDomain("strata.io").setReason(reason)
        .putAllMetadata(metadata).build();
    return StatusProto.toStatusException(com.google.rpc.Status.newBuilder()
        .setCode(code.getNumber()).setMessage(message).addDetails(Any.pack(info)).build());
  }

  /** The NOT_LEADER status of a follower naming {@code leader} (empty: none). */
  public static StatusException notLeader(String leader) {
    return strataStatus(Code.UNAVAILABLE, "NOT_LEADER", leader.isEmpty()
        ? "this member is not the leader and knows of none (an election is under way)"
        : "this member is not the leader; the leader is " + leader,
        leader.isEmpty() ? Map.of() : Map.of("leader", leader));
  }

  /** Stops serving: the member is down and its port refuses connections. */
  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      callwire.close();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The answer of a leader to a call of {@code method}: scripted, or {@code otherwise}. */
  private Object leading(String method, Message req, Object otherwise) {
    Function<Message, Object> f;
    synchronized (mu) {
      f = answers.get(method);
    }
    return f == null ? otherwise : f.apply(req);
  }

  /** Answers each call of {@code req} as if it came alone; DROP if one is dropped. */
  private Object batch(BatchRequest req) {
    BatchResponse.Builder resp = BatchResponse.newBuilder();
    for (BatchCall call : req.getCallsList()) {
      FieldDescriptor f = call.getOneofFieldDescriptor(BatchCall.getDescriptor().getOneofs()
          .get(0));
      String method = f.getMessageType().getName().replaceFirst("Request$", "");
      BatchResult.Builder r = BatchResult.newBuilder();
      FieldDescriptor rf = BatchResult.getDescriptor().findFieldByName(f.getName());
      Object answer = leading(method, (Message) call.getField(f),
          r.newBuilderForField(rf).build());
      if (answer == DROP) {
        return DROP;
      } else if (answer instanceof StatusException e) {
        r.setError(StatusProto.fromThrowable(e).toByteString());
      } else if (answer instanceof Status st) {
        r.setError(StatusProto.fromStatusAndTrailers(st, null).toByteString());
      } else {
        r.setField(rf, answer);
      }
      resp.addResults(r);
    }
    return resp.build();
  }

  private ServerServiceDefinition service() {
    ServiceDescriptor sd = MetaServiceGrpc.getServiceDescriptor();
    ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(sd);
    for (MethodDescriptor<?, ?> md : sd.getMethods()) {
      add(b, md);
    }
    return b.build();
  }

  private <Q, R> void add(ServerServiceDefinition.Builder b, MethodDescriptor<Q, R> md) {
    b.addMethod(md, ServerCalls.asyncUnaryCall(
        (Q req, StreamObserver<R> out) -> handle(md, (Message) req, out)));
  }

  @SuppressWarnings("unchecked")
  private <R> void handle(MethodDescriptor<?, R> md, Message req, StreamObserver<R> out) {
    Object answer = answerOf(md, req);
    if (answer == HANG) {
      return; // Never answered; the server's shutdown cancels it.
    }
    if (answer == DROP) {
      drop();
      return; // The connection's end ends the call.
    }
    if (answer instanceof StatusException e) {
      out.onError(e);
    } else if (answer instanceof Status s) {
      out.onError(s.asException());
    } else {
      out.onNext((R) answer);
      out.onCompleted();
    }
  }

  /** Answers a callwire request as {@link #handle} answers a gRPC call. */
  private void handleCallwire(FakeCallwire.Request r, java.io.OutputStream out)
      throws IOException, InterruptedException {
    MethodDescriptor<?, ?> md = MetaServiceGrpc.getServiceDescriptor().getMethods().stream()
        .filter(m -> ("/" + m.getFullMethodName()).equals(r.method())).findFirst().orElse(null);
    if (md == null) {
      FakeCallwire.status(out, com.google.rpc.Status.newBuilder()
          .setCode(Code.UNIMPLEMENTED.getNumber()).setMessage("no method " + r.method()).build());
      return;
    }
    Message req = (Message) md.parseRequest(new java.io.ByteArrayInputStream(r.message()));
    Object answer = answerOf(md, req);
    if (answer == HANG) {
      new java.util.concurrent.CountDownLatch(1).await(); // Until close interrupts it.
    } else if (answer == DROP) {
      drop();
    } else if (answer instanceof StatusException e) {
      FakeCallwire.status(out, StatusProto.fromThrowable(e));
    } else if (answer instanceof Status s) {
      FakeCallwire.status(out, StatusProto.fromStatusAndTrailers(s, null));
    } else {
      FakeCallwire.message(out, ((Message) answer).toByteArray());
    }
  }

  /** Closes every connection of the member: a call dropped. */
  private void drop() {
    try {
      callwire.dropConnections();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * The answer to a call of {@code md}: a message, a StatusException or Status, HANG or DROP.
   */
  @SuppressWarnings("unchecked")
  private <R> Object answerOf(MethodDescriptor<?, R> md, Message req) {
    String method = md.getBareMethodName();
    Object answer;
    synchronized (mu) {
      Received r = new Received(method, req);
      received.add(r);
      onReceive.accept(r);
      mu.notifyAll();
      if (hanging) {
        return HANG;
      }
      if (!failures.isEmpty()) {
        answer = failures.poll();
      } else if (!leading) {
        answer = notLeader(leaderHint);
      } else {
        answer = null;
      }
    }
    if (answer == null) {
      answer = method.equals("Batch") ? batch((BatchRequest) req) : leading(method, req,
          ((MethodDescriptor.PrototypeMarshaller<R>) md.getResponseMarshaller())
              .getMessagePrototype());
    }
    return answer;
  }
}
