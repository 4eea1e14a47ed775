package io.strata.core.rpc;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The client side of callwire, the namespace service's transport for unary calls besides gRPC
 * (its wire format: internal/callwire/doc.go): the calls of one member, each written and read on
 * the calling thread, on a connection it holds alone for the call. No event loop and no thread
 * hand-off: what gRPC-Java's per-call work costs a lone caller (docs/benchmarks.md, issue 21).
 *
 * <p>It keeps a pool of idle connections, the one given back last taken first, and closes those no
 * call took for {@link #IDLE_NANOS} (a burst of callers leaves as many as it had callers at once;
 * the service closes a connection idle for 5 minutes). A call takes one,
 * or dials (TCP_NODELAY; the connect bounded by the attempt's time left), writes its request
 * frame in one write, reads the response frame, and gives the connection back after a clean
 * answer. Any I/O error, timeout, interrupt or malformed answer closes the connection, and so
 * does an UNAVAILABLE answer (the member is going away, or refused the connection's preface);
 * a transport failure (UNAVAILABLE) closes the idle connections too.
 *
 * <p>Failures are the StatusRuntimeExceptions a gRPC blocking call would have thrown, so that
 * {@link MetaCaller} retries and {@link io.strata.core.error.ErrorTranslator} words them alike: a
 * kind 1 answer is the call's status as the service sent it; a transport failure is UNAVAILABLE
 * with the IOException as its cause; the attempt's deadline passing is DEADLINE_EXCEEDED; an
 * interrupt is CANCELLED, as gRPC's, and leaves the thread interrupted.
 *
 * <p>NB: the connections are SocketChannels in blocking mode, used through their socket's
 * streams: a read honours the socket's timeout, and an interrupt closes the channel, so a
 * blocked call ends at once (CallSocketTest checks both on this JDK). A write has no timeout:
 * requests are small, and a member that stops reading is closed by the read's.
 *
 * <p>Safe for concurrent use.
 */
final class CallSocket implements MetaCaller.Link {
  /** Largest frame, either way (the format and its constants: {@link Frames}). */
  static final int MAX_FRAME = Frames.MAX_FRAME;

  /** Longest a connect may take, however long the attempt may (gRPC-Java's own is 20 s). */
  static final long MAX_CONNECT_NANOS = TimeUnit.SECONDS.toNanos(20);

  /**
   * The method names as the frames carry them, by gRPC-Java's full name: with the leading slash
   * of gRPC's wire (and of Go's names), which gRPC-Java's full names have not.
   */
  private static final java.util.concurrent.ConcurrentMap<String, byte[]> NAMES =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * How long a connection no call took stays in the pool: a minute, as the Go client's, well under
   * the service's 5 (internal/callwire IdleTimeout), so that no call takes one the service closed.
   */
  static final long IDLE_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** A connection's buffers are kept between calls up to this size, and dropped past it. */
  private static final int KEEP_BUFFER = 1 << 20;

  private final HostPort member;
  private final SSLSocketFactory tls; // null: plaintext
  private final byte[] hello;
  private final AtomicInteger dialled = new AtomicInteger();
  private final LongSupplier clock; // System::nanoTime; tests move it

  /** Whether a member was reached once: a TLS handshake done, or an answer of the service. */
  private volatile boolean reached;

  private final Object mu = new Object();
  // Guarded by mu; the head is the connection given back last.
  private final Deque<Conn> idle = new ArrayDeque<>();
  private boolean closed;

  /**
   * Creates the client of {@code member}, connecting with {@code tls}, whose calls carry {@code
   * token} (null: none); nothing is dialled until the first call.
   */
  CallSocket(HostPort member, Tls tls, String token) {
    this(member, tls, token, System::nanoTime);
  }

  /** As {@link #CallSocket(HostPort, Tls, String)}, its pool's idle times on {@code clock}. */
  CallSocket(HostPort member, Tls tls, String token, LongSupplier clock) {
    this.member = member;
    this.clock = clock;
    this.tls = tls.isPlaintext() ? null : tls.socketFactory();
    this.hello = Frames.hello(token);
  }

  @Override
  public MetaCaller.Unary unary(long timeoutNanos) {
    return new MetaCaller.Unary() {
      @Override
      public <Q, R> R call(MethodDescriptor<Q, R> m, Q req) {
        return CallSocket.this.call(m, req, timeoutNanos);
      }
    };
  }

  @Override
  public boolean connected() {
    return reached;
  }

  /** Number of connections dialled so far (for tests). */
  int dialled() {
    return dialled.get();
  }

  /**
   * Makes a call of {@code m} with {@code req}, whose answer must come within {@code
   * timeoutNanos} (0: no deadline), and returns its response; a failure is a
   * StatusRuntimeException, as gRPC's blocking calls throw.
   */
  <Q, R> R call(MethodDescriptor<Q, R> m, Q req, long timeoutNanos) {
    long start = System.nanoTime();
    long deadline = timeoutNanos > 0 ? start + timeoutNanos : 0;
    if (Thread.currentThread().isInterrupted()) {
      throw cancelled(new InterruptedIOException("interrupted before the call"));
    }
    Conn c = null;
    try {
      c = take(deadline);
      R r = c.call(m, req, deadline);
      give(c);
      return r;
    } catch (Answer a) {
      if (a.keep) {
        give(c);
      } else {
        c.close();
      }
      throw a.status;
    } catch (IOException e) {
      if (c != null) {
        c.close();
      }
      StatusRuntimeException st = failure(e, start);
      if (st.getStatus().getCode() == Status.Code.UNAVAILABLE) {
        // NB: the member went away, or restarted: the connections idle in the pool went with
        // it, and each would fail a retry of its own.
        dropIdle();
      }
      throw st;
    } catch (RuntimeException | Error e) {
      if (c != null) {
        c.close();
      }
      throw e;
    }
  }

  /** Closes the idle connections; those in use are closed when their call ends. */
  @Override
  public void shutdown() {
    synchronized (mu) {
      closed = true;
    }
    dropIdle();
  }

  /** Closes the idle connections. */
  private void dropIdle() {
    List<Conn> drop;
    synchronized (mu) {
      drop = List.copyOf(idle);
      idle.clear();
    }
    drop.forEach(Conn::close);
  }

  @Override
  public boolean awaitTermination(long nanos) {
    return true;
  }

  @Override
  public void shutdownNow() {
    shutdown();
  }

  private Conn take(long deadline) throws IOException {
    List<Conn> expired = null;
    Conn c;
    synchronized (mu) {
      if (closed) {
        throw new IOException("the Strata client is closed");
      }
      long now = clock.getAsLong();
      while (!idle.isEmpty() && now - idle.peekLast().idleSince >= IDLE_NANOS) {
        if (expired == null) {
          expired = new ArrayList<>();
        }
        expired.add(idle.pollLast());
      }
      c = idle.pollFirst();
    }
    if (expired != null) {
      expired.forEach(Conn::close);
    }
    return c != null ? c : dial(deadline);
  }

  private void give(Conn c) {
    synchronized (mu) {
      if (!closed) {
        c.idleSince = clock.getAsLong();
        idle.addFirst(c);
        return;
      }
    }
    c.close();
  }

  /** Dials a connection: its preface, its TLS handshake; the hello leaves with the first call. */
  private Conn dial(long deadline) throws IOException {
    SocketChannel ch = SocketChannel.open();
    try {
      Socket s = ch.socket();
      s.setTcpNoDelay(true);
      dialled.incrementAndGet();
      long connect = deadline == 0 ? MAX_CONNECT_NANOS
          : Math.min(left(deadline), MAX_CONNECT_NANOS);
      s.connect(new InetSocketAddress(member.host(), member.port()), millis(connect));
      if (tls == null) {
        return new Conn(ch, s, concat(Frames.PREFACE_PLAIN, hello));
      }
      s.getOutputStream().write(Frames.PREFACE_TLS);
      SSLSocket ss = (SSLSocket) tls.createSocket(s, member.host(), member.port(), true);
      SSLParameters p = ss.getSSLParameters();
      p.setEndpointIdentificationAlgorithm("HTTPS");
      ss.setSSLParameters(p);
      ss.setSoTimeout(deadline == 0 ? 0 : millis(left(deadline)));
      ss.startHandshake();
      reached = true;
      return new Conn(ch, ss, hello);
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /** The status for {@code e}, which ended a call started at {@code start}. */
  private StatusRuntimeException failure(IOException e, long start) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ClosedByInterruptException) {
        return cancelled(e);
      }
      if (t instanceof SocketTimeoutException) {
        return Status.DEADLINE_EXCEEDED.withDescription(String.format(java.util.Locale.ROOT,
            "deadline exceeded after %.3fs (callwire to %s)", (System.nanoTime() - start) / 1e9,
            member)).withCause(e).asRuntimeException();
      }
    }
    if (Thread.currentThread().isInterrupted()) {
      return cancelled(e);
    }
    if (e instanceof Frames.Malformed) {
      return Status.UNAVAILABLE.withDescription("callwire to " + member + ": " + e.getMessage())
          .withCause(e).asRuntimeException();
    }
    return Status.UNAVAILABLE.withDescription("io exception (callwire to " + member + ")")
        .withCause(e).asRuntimeException();
  }

  /**
   * An interrupted call's status, as gRPC's blocking calls have it; the thread stays
   * interrupted.
   */
  private static StatusRuntimeException cancelled(IOException e) {
    Thread.currentThread().interrupt();
    return Status.CANCELLED.withDescription("Thread interrupted").withCause(e)
        .asRuntimeException();
  }

  /** Nanoseconds left until {@code deadline}; a SocketTimeoutException if none is. */
  private static long left(long deadline) throws SocketTimeoutException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new SocketTimeoutException("the attempt's deadline passed");
    }
    return left;
  }

  /** {@code nanos} in whole milliseconds, at least 1 (0 means no timeout to a socket). */
  private static int millis(long nanos) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos)));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** An answer that is a status (kind 1); {@code keep}: the connection may serve more calls. */
  private static final class Answer extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient StatusRuntimeException status;
    final boolean keep;

    Answer(StatusRuntimeException status, boolean keep) {
      super(null, null, false, false);
      this.status = status;
      this.keep = keep;
    }
  }

  /** One connection, used by one call at a time, and its buffers. */
  private final class Conn implements Closeable {
    private final SocketChannel ch;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    /** What the first request's write carries before it: the preface and hello, or the hello. */
    private byte[] before;
    private byte[] wbuf = new byte[512];
    private byte[] rbuf = new byte[512];
    private final byte[] head = new byte[Frames.RESPONSE_HEAD];
    /** The length of the body read last, in rbuf. */
    private int bodyLength;
    /** When the connection was last given back to the pool (the clock's nanoseconds). */
    private long idleSince;

    Conn(SocketChannel ch, Socket socket, byte[] before) throws IOException {
      this.ch = ch;
      this.socket = socket;
      this.in = new BufferedInputStream(socket.getInputStream(), 8192);
      this.out = socket.getOutputStream();
      this.before = before;
    }

    <Q, R> R call(MethodDescriptor<Q, R> m, Q req, long deadline) throws IOException {
      write(m, req, deadline);
      int kind = read(deadline);
      int n = bodyLength;
      if (kind == Frames.KIND_STATUS) {
        com.google.rpc.Status st = Frames.status(rbuf, n);
        boolean unavailable = st.getCode() == Status.Code.UNAVAILABLE.value();
        if (!unavailable || st.getDetailsCount() > 0) {
          reached = true;
        }
        throw new Answer(StatusProto.toStatusRuntimeException(st), !unavailable);
      }
      R r = parse(m, n);
      reached = true;
      if (rbuf.length > KEEP_BUFFER) {
        rbuf = new byte[512];
      }
      return r;
    }

    /** Writes the request frame of {@code req}, in one write. */
    private <Q> void write(MethodDescriptor<Q, ?> m, Q req, long deadline) throws IOException {
      byte[] name = NAMES.computeIfAbsent(m.getFullMethodName(),
          n -> ("/" + n).getBytes(StandardCharsets.US_ASCII));
      MessageLite msg = req instanceof MessageLite l ? l : null;
      byte[] other = msg == null ? m.streamRequest(req).readAllBytes() : null;
      int size = msg != null ? msg.getSerializedSize() : other.length;
      long n = 1L + name.length + 8 + size;
      if (n > MAX_FRAME) {
        throw Status.RESOURCE_EXHAUSTED.withDescription(String.format(java.util.Locale.ROOT,
            "a request of %d bytes, over callwire's limit of %d", n, MAX_FRAME))
            .asRuntimeException();
      }
      long timeout = deadline == 0 ? 0 : left(deadline);
      int pre = before == null ? 0 : before.length;
      int total = pre + 4 + (int) n;
      if (wbuf.length < total) {
        wbuf = new byte[Math.max(total, 2 * wbuf.length)];
      }
      if (before != null) {
        System.arraycopy(before, 0, wbuf, 0, pre);
      }
      int off = Frames.putRequestHead(wbuf, pre, name, timeout, size);
      if (msg != null) {
        CodedOutputStream cos = CodedOutputStream.newInstance(wbuf, off, size);
        msg.writeTo(cos);
        cos.checkNoSpaceLeft();
      } else {
        System.arraycopy(other, 0, wbuf, off, size);
      }
      out.write(wbuf, 0, total);
      before = null;
      if (wbuf.length > KEEP_BUFFER) {
        wbuf = new byte[512];
      }
    }

    /** Reads a response frame's head and body (into rbuf, bodyLength); returns its kind. */
    private int read(long deadline) throws IOException {
      readFully(head, Frames.RESPONSE_HEAD, deadline, true);
      bodyLength = Frames.responseBodyLength(head);
      if (rbuf.length < bodyLength) {
        rbuf = new byte[Math.max(bodyLength, 2 * rbuf.length)];
      }
      readFully(rbuf, bodyLength, deadline, false);
      return head[4];
    }

    /** Reads {@code n} bytes into {@code b}; each read waits no later than {@code deadline}. */
    private void readFully(byte[] b, int n, long deadline, boolean head) throws IOException {
      int off = 0;
      while (off < n) {
        socket.setSoTimeout(deadline == 0 ? 0 : millis(left(deadline)));
        int k = in.read(b, off, n - off);
        if (k < 0) {
          if (head && off == 0) {
            throw new EOFException("the service closed the connection");
          }
          throw new Frames.Malformed("malformed answer: a short frame (the connection closed "
              + off + " bytes into " + (head ? "its head" : "its body of " + n + " bytes") + ")",
              new EOFException());
        }
        off += k;
      }
    }

    @SuppressWarnings("unchecked")
    private <R> R parse(MethodDescriptor<?, R> m, int n) throws IOException {
      try {
        if (m.getResponseMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<R> pm
            && pm.getMessagePrototype() instanceof MessageLite proto) {
          return (R) proto.getParserForType().parseFrom(rbuf, 0, n);
        }
        return m.parseResponse(new java.io.ByteArrayInputStream(rbuf, 0, n));
      } catch (InvalidProtocolBufferException e) {
        throw new Frames.Malformed("malformed answer: a " + m.getBareMethodName()
            + " response that does not parse", e);
      }
    }

    @Override
    public void close() {
      try {
        socket.close();
        ch.close();
      } catch (IOException e) {
        // Nothing to do: the connection is gone either way.
      }
    }
  }
}
