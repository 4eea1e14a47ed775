package io.strata.core.testing;

import io.strata.core.rpc.Frames;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A callwire server in Java for the client's tests (the wire format: internal/callwire/doc.go):
 * plaintext only, on loopback, one thread per connection. It reads the preface and the hello,
 * then request frames, and hands each to a {@link Handler}, which writes the answer, a
 * well-formed one ({@link #message}, {@link #status}) or not, or none. A {@code STRATA1T}
 * preface gets a kind 1 UNAVAILABLE, as a plaintext service answers it, and the connection
 * closes. A connection that opens with other bytes goes to the {@link Other} given, as the
 * service hands it to gRPC (or is closed). It counts the callwire connections it accepted and
 * records each request. Safe for concurrent use.
 */
public final class FakeCallwire implements AutoCloseable {
  /** One request frame as received, and the connection's token. */
  public record Request(int connection, String token, String method, long timeoutNanos,
      byte[] message) {}

  /** Answers one request on {@code out}, the connection's stream; may block, or throw. */
  @FunctionalInterface
  public interface Handler {
    void handle(Request r, OutputStream out) throws IOException, InterruptedException;
  }

  /** Serves a connection that is not callwire's, whose first bytes were read: {@code first}. */
  @FunctionalInterface
  public interface Other {
    void serve(Socket s, byte[] first) throws IOException;
  }

  private final Handler handler;
  private final Other other;
  private final int port;
  private final AtomicInteger connections = new AtomicInteger();

  private final Object mu = new Object();
  // Guarded by mu.
  private ServerSocket listener; // null while refusing
  private boolean down;
  private int tried; // connections closed at once while down
  private final List<Socket> open = new ArrayList<>();
  private final List<Request> received = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>(); // the acceptors' and connections'

  private FakeCallwire(Handler handler, Other other) throws IOException {
    this.handler = handler;
    this.other = other;
    ServerSocket l = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.port = l.getLocalPort();
    synchronized (mu) {
      listen(l);
    }
  }

  /** Starts accepting on {@code l}, the listener from now on. */
  private void listen(ServerSocket l) {
    listener = l;
    Thread t = new Thread(() -> accept(l), "fake-callwire-accept");
    t.setDaemon(true);
    threads.add(t);
    t.start();
  }

  /** Starts a server on loopback whose requests {@code handler} answers. */
  public static FakeCallwire start(Handler handler) throws IOException {
    return new FakeCallwire(handler, null);
  }

  /**
   * Starts a server on loopback whose requests {@code handler} answers, and whose connections
   * that do not open with callwire's preface {@code other} serves.
   */
  public static FakeCallwire start(Handler handler, Other other) throws IOException {
    return new FakeCallwire(handler, other);
  }

  /** Records {@code s}, a socket of a connection served, to be closed by {@link #close}. */
  public void track(Socket s) {
    synchronized (mu) {
      open.add(s);
    }
  }

  /** The server's host:port. */
  public String address() {
    return "127.0.0.1:" + port;
  }

  /** Number of connections accepted so far. */
  public int connections() {
    return connections.get();
  }

  /** The requests received so far, in order. */
  public List<Request> received() {
    synchronized (mu) {
      return List.copyOf(received);
    }
  }

  /** Writes a kind 0 answer: {@code message}, protobuf-encoded. */
  public static void message(OutputStream out, byte[] message) throws IOException {
    frame(out, 0, message);
  }

  /** Writes a kind 1 answer: {@code status}, a google.rpc.Status. */
  public static void status(OutputStream out, com.google.rpc.Status status) throws IOException {
    frame(out, 1, status.toByteArray());
  }

  /** Writes a response frame of {@code kind} and {@code body}. */
  public static void frame(OutputStream out, int kind, byte[] body) throws IOException {
    out.write(Frames.response(kind, body));
    out.flush();
  }

  private void accept(ServerSocket l) {
    for (;;) {
      Socket s;
      try {
        s = l.accept();
      } catch (IOException e) {
        return; // Closed.
      }
      Thread t = new Thread(() -> serve(s), "fake-callwire-conn");
      t.setDaemon(true);
      synchronized (mu) {
        if (listener != l) {
          // Refused meanwhile: accepted before the port closed, after its connections were
          // dropped.
          closeQuietly(s);
          return;
        }
        if (down) {
          tried++;
          mu.notifyAll();
          closeQuietly(s);
          continue;
        }
        open.add(s);
        threads.add(t);
      }
      t.start();
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // Closed either way.
    }
  }

  /**
   * Closes every connection, then takes each new one only to close it at once (a member going
   * down), counting them ({@link #awaitTried}), until {@link #up}.
   */
  public void down() throws IOException {
    synchronized (mu) {
      down = true;
      tried = 0;
    }
    dropConnections();
  }

  /** Closes every connection and the port: connections are refused, until {@link #up}. */
  public void refuse() throws IOException {
    synchronized (mu) {
      if (listener != null) {
        listener.close();
        listener = null;
      }
    }
    dropConnections();
  }

  /** Serves again, on the same port, after {@link #down} or {@link #refuse}. */
  public void up() throws IOException {
    synchronized (mu) {
      down = false;
      if (listener == null) {
        ServerSocket l = new ServerSocket();
        l.setReuseAddress(true);
        l.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        listen(l);
      }
    }
  }

  /**
   * Waits until {@code n} connections came while down; fails after 30 s (a bound for a broken
   * test, not a synchronisation).
   */
  public void awaitTried(int n) throws InterruptedException {
    long until = System.nanoTime() + 30_000_000_000L;
    synchronized (mu) {
      while (tried < n) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError(tried + " connections came while down, want " + n);
        }
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
      OutputStream out = s.getOutputStream();
      byte[] preface = new byte[8];
      in.readFully(preface);
      String p = new String(preface, StandardCharsets.US_ASCII);
      if (!p.startsWith("STRATA1")) {
        if (other != null) {
          // NB: a gRPC client's first bytes are HTTP/2's 24-byte preface: all of it was sent,
          // and the buffer took no more than is there.
          byte[] first = new byte[8 + in.available()];
          System.arraycopy(preface, 0, first, 0, 8);
          in.readFully(first, 8, first.length - 8);
          other.serve(s, first);
        }
        return;
      }
      int n = connections.incrementAndGet();
      if (!p.equals("STRATA1P")) {
        status(out, com.google.rpc.Status.newBuilder().setCode(14)
            .setMessage("the service at " + address() + " serves plaintext: this fake").build());
        return;
      }
      byte[] token = new byte[in.readInt()];
      in.readFully(token);
      String tok = new String(token, StandardCharsets.UTF_8);
      for (;;) {
        byte[] head = new byte[4];
        try {
          in.readFully(head);
        } catch (EOFException e) {
          return; // The client closed the connection.
        }
        byte[] f = new byte[Frames.requestLength(head)];
        in.readFully(f);
        Frames.Request q = Frames.parseRequest(f);
        if (s.isClosed()) {
          return; // Dropped meanwhile: the request came after the member went away.
        }
        Request r = new Request(n, tok, q.method(), q.timeoutNanos(), q.message());
        synchronized (mu) {
          received.add(r);
          mu.notifyAll();
        }
        handler.handle(r, out);
      }
    } catch (IOException | InterruptedException e) {
      // The connection is gone, or the server closing.
    }
  }

  /**
   * Waits until {@code n} requests were received; fails after 30 s (a bound for a broken test,
   * not a synchronisation).
   */
  public void awaitRequests(int n) throws InterruptedException {
    long until = System.nanoTime() + 30_000_000_000L;
    synchronized (mu) {
      while (received.size() < n) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("fewer than " + n + " requests: " + received.size());
        }
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(mu, left);
      }
    }
  }

  /** Closes every connection open, as a service that restarts does; it goes on listening. */
  public void dropConnections() throws IOException {
    List<Socket> socks;
    synchronized (mu) {
      socks = List.copyOf(open);
      open.clear();
    }
    for (Socket s : socks) {
      // NB: a close alone may leave a read blocked on the socket to read what comes next
      // (this JDK defers the close of a socket a thread reads until the read ends); shutting
      // the input ends that read at once.
      try {
        s.shutdownInput();
      } catch (IOException e) {
        // Not connected any more: nothing to end.
      }
      s.close();
    }
  }

  /** Stops listening and closes every connection; handlers blocked are interrupted. */
  @Override
  public void close() throws IOException {
    try {
      closeAndJoin();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeAndJoin() throws IOException, InterruptedException {
    List<Socket> socks;
    List<Thread> ts;
    synchronized (mu) {
      if (listener != null) {
        listener.close();
        listener = null;
      }
      socks = List.copyOf(open);
      ts = List.copyOf(threads);
    }
    for (Socket s : socks) {
      s.close();
    }
    for (Thread t : ts) {
      t.interrupt();
      t.join();
    }
  }
}
