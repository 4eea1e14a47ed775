package io.strata.core.worker;

import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
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

  FakeScWorker(Function<Received, ShortCircuitResponse> answer) throws IOException {
    this.answer = answer;
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
