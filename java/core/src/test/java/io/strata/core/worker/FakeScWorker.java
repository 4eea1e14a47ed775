package io.strata.core.worker;

import com.google.protobuf.ByteString;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Function;

/**
 * A worker's short-circuit socket that answers as a test says: each request, in order of
 * arrival, goes to {@code answer}, which returns the response (it may block, to hold an answer
 * back). Records the requests, each with the number of the connection it came on, and each
 * connection's end ({@link #ends}: the connection's number, and the count of requests it had
 * made). Speaks the framing of {@link UnixConnection}: a uvarint length and a protobuf body.
 * Answers hellos itself, with a key of its own, as the worker of {@link #as} (neither recorded nor
 * counted).
 */
final class FakeScWorker implements AutoCloseable {
  /** A request, and the connection (numbered from 0 by arrival) it came on. */
  record Received(int conn, ShortCircuitRequest request) {}

  /** A connection that ended: its number and how many requests it made. */
  record Ended(int conn, int requests) {}

  private final Path dir;
  private final Path socket;
  private final ServerSocketChannel server;
  private final Function<Received, ShortCircuitResponse> answer;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final BlockingQueue<Ended> ends = new LinkedBlockingQueue<>();
  private final Thread acceptor;

  /** The key it signs hellos with, as a worker does (ShortCircuitHello). */
  private final KeyPair key;

  /** The worker id it answers hellos as. */
  private volatile String id = "w-fake";

  FakeScWorker(Function<Received, ShortCircuitResponse> answer) throws IOException {
    this.answer = answer;
    try {
      this.key = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IOException(e);
    }
    this.dir = Files.createTempDirectory("strata-fakesc");
    this.socket = dir.resolve("sc.sock");
    this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    acceptor = new Thread(this::accept, "fake-short-circuit-worker");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The socket's path. */
  Path socket() {
    return socket;
  }

  /** Answers hellos as worker {@code id} from now on, whatever {@link #as} said. */
  void answerAs(String id) {
    this.id = id;
  }

  /**
   * Returns {@code w} as the service would list it were this fake that worker: its socket here,
   * its key this fake's, and this fake answering hellos as {@code w}'s id from now on.
   */
  WorkerInfo as(WorkerInfo w) {
    id = w.getId();
    byte[] x509 = key.getPublic().getEncoded(); // the raw key is its last 32 bytes
    return w.toBuilder().setUnixSocket(socket.toString())
        .setScKey(ByteString.copyFrom(x509, x509.length - 32, 32)).build();
  }

  /** A scratch directory that goes with the fake. */
  Path dir() {
    return dir;
  }

  /** The requests so far. */
  List<Received> received() {
    return received;
  }

  /** The connections that ended, as they end. */
  BlockingQueue<Ended> ends() {
    return ends;
  }

  private void accept() {
    for (int n = 0; ; n++) {
      SocketChannel c;
      try {
        c = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      int conn = n;
      Thread t = new Thread(() -> serve(conn, c), "fake-short-circuit-conn-" + conn);
      t.setDaemon(true);
      t.start();
    }
  }

  private void serve(int conn, SocketChannel c) {
    int count = 0;
    try (c) {
      InputStream in = Channels.newInputStream(c);
      OutputStream out = Channels.newOutputStream(c);
      while (true) {
        ShortCircuitRequest req = ShortCircuitRequest.parseDelimitedFrom(in);
        if (req == null) {
          break;
        }
        if (!req.getHello().isEmpty()) { // not counted: the client's proof that this is its worker
          hello(req).writeDelimitedTo(out);
          out.flush();
          continue;
        }
        count++;
        Received r = new Received(conn, req);
        received.add(r);
        answer.apply(r).writeDelimitedTo(out);
        out.flush();
      }
    } catch (IOException e) {
      // The client went away: an end like any other.
    }
    ends.add(new Ended(conn, count));
  }

  private ShortCircuitResponse hello(ShortCircuitRequest req) throws IOException {
    try {
      Signature s = Signature.getInstance("Ed25519");
      s.initSign(key.getPrivate());
      s.update("strata-sc-hello\0".getBytes(StandardCharsets.US_ASCII));
      s.update(req.getHello().toByteArray());
      return ShortCircuitResponse.newBuilder().setOk(true).setWorkerId(id)
          .setHelloSignature(ByteString.copyFrom(s.sign())).build();
    } catch (GeneralSecurityException e) {
      throw new IOException(e);
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    try (var files = Files.walk(dir)) {
      for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
