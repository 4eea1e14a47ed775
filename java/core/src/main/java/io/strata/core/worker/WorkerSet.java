package io.strata.core.worker;

import io.grpc.ManagedChannel;
import io.strata.core.error.DataPathUnavailableException;
import io.strata.core.error.ErrorTranslator;
import io.strata.core.error.Op;
import io.strata.core.rpc.Channels;
import io.strata.core.rpc.Tls;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerServiceGrpc;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The live workers and the connections to them, as the Go client's workerSet: the list comes
 * from the namespace service (ListWorkers) and is trusted for {@link #LIST_TTL}, or refreshed at
 * once after a worker failed; one gRPC channel per worker address, one pool of short-circuit
 * connections per worker socket, and the threads awaiting short-circuit writes' commits. Safe
 * for concurrent use.
 */
final class WorkerSet implements AutoCloseable {
  /** How long the list of live workers is trusted. */
  static final Duration LIST_TTL = Duration.ofSeconds(3);

  private final WorkerBlockIO.Directory directory;
  private final String host;
  private final boolean shortCircuit;
  private final boolean shortCircuitWrites;
  private final Duration timeout;
  /**
   * Waits for the answers to short-circuit writes' commits, which the worker gives once the
   * block is in the bucket, so that the writer goes on with its next block meanwhile: a thread
   * per commit awaited (a writer awaits at most a few), kept a minute once idle.
   */
  private final ExecutorService commits = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "strata-short-circuit-commit");
    t.setDaemon(true);
    return t;
  });

  private final Object mu = new Object();
  // Guarded by mu.
  private List<WorkerInfo> list = List.of();
  private long fetchedAt;
  private final Map<String, ManagedChannel> channels = new HashMap<>();
  private final Map<String, ShortCircuit> sockets = new HashMap<>();
  private boolean closed;
  private final Tls tls;

  WorkerSet(WorkerBlockIO.Directory directory, String host, boolean shortCircuit,
      Duration timeout) {
    this(directory, host, shortCircuit, timeout, Tls.fromEnvironment());
  }

  WorkerSet(WorkerBlockIO.Directory directory, String host, boolean shortCircuit,
      Duration timeout, Tls tls) {
    this(directory, host, shortCircuit, shortCircuit, timeout, tls);
  }

  /**
   * The workers {@code directory} lists, for a client on {@code host}; short-circuit reads with
   * {@code shortCircuit}, short-circuit writes with both it and {@code shortCircuitWrites}.
   */
  WorkerSet(WorkerBlockIO.Directory directory, String host, boolean shortCircuit,
      boolean shortCircuitWrites, Duration timeout, Tls tls) {
    this.tls = tls;
    this.directory = directory;
    this.host = host;
    this.shortCircuit = shortCircuit;
    this.shortCircuitWrites = shortCircuit && shortCircuitWrites;
    this.timeout = timeout;
  }

  /** The deadline of each call to a worker, and of each wait on one. */
  Duration timeout() {
    return timeout;
  }

  /**
   * How long a lookup waits for a live worker while the service knows of none, as the Go
   * client's workerWait: workers heartbeat to every member every second, so a new leader knows
   * them at once, and a leader elected moments after it started within a heartbeat interval.
   */
  static final Duration WORKER_WAIT = Duration.ofSeconds(3);

  /**
   * Returns the live workers, asking the service when the list is older than {@link #LIST_TTL}
   * or {@code refresh} is set. An empty list is asked for again, with backoff, for up to {@link
   * #WORKER_WAIT}; no live worker then is a {@link DataPathUnavailableException} (temporary).
   */
  List<WorkerInfo> live(Op op, String path, boolean refresh) throws IOException {
    synchronized (mu) {
      if (!refresh && !list.isEmpty() && System.nanoTime() - fetchedAt < LIST_TTL.toNanos()) {
        return list;
      }
    }
    long deadline = System.nanoTime() + WORKER_WAIT.toNanos();
    long backoffMillis = 50;
    List<WorkerInfo> fresh = List.copyOf(directory.listWorkers());
    while (fresh.isEmpty()) {
      if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis) - deadline > 0) {
        throw new DataPathUnavailableException(op, path,
            op.name().toLowerCase(java.util.Locale.ROOT) + " " + path
                + ": no live workers (the namespace service's leader has heard from none; waited "
                + WORKER_WAIT.toSeconds() + "s): start one with 'strata worker' (or use "
                + "'strata server --dev')");
      }
      try {
        Thread.sleep(backoffMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException(op.name().toLowerCase(java.util.Locale.ROOT)
            + " " + path + ": interrupted while waiting for a live worker");
      }
      backoffMillis = Math.min(2 * backoffMillis, 500);
      fresh = List.copyOf(directory.listWorkers());
    }
    List<ManagedChannel> gone = new ArrayList<>();
    synchronized (mu) {
      list = fresh;
      fetchedAt = System.nanoTime();
      Set<String> addresses = new HashSet<>();
      fresh.forEach(w -> addresses.add(w.getAddress()));
      channels.entrySet().removeIf(e -> {
        if (addresses.contains(e.getKey())) {
          return false;
        }
        gone.add(e.getValue());
        return true;
      });
    }
    // Calls in flight on a departed worker's channel finish (or fail) on their own.
    gone.forEach(ManagedChannel::shutdown);
    return fresh;
  }

  /** Orders {@code workers} by preference for {@code block} of {@code inode}: its home first. */
  static List<WorkerInfo> rank(List<WorkerInfo> workers, long inode, long block) {
    List<String> ids = new ArrayList<>(workers.size());
    workers.forEach(w -> ids.add(w.getId()));
    List<WorkerInfo> out = new ArrayList<>(workers.size());
    for (int i : Rendezvous.rank(ids, inode, block)) {
      out.add(workers.get(i));
    }
    return out;
  }

  /**
   * Reports whether {@code w} runs on this host with a short-circuit socket this client can
   * reach (and short-circuit reads are enabled).
   */
  boolean local(WorkerInfo w) {
    return shortCircuit && w.getHost().equals(host) && !w.getUnixSocket().isEmpty()
        && Files.exists(Path.of(w.getUnixSocket()));
  }

  /** Reports whether a block for {@code w} is written short-circuit, into its cache file. */
  boolean writesShortCircuit(WorkerInfo w) {
    return shortCircuitWrites && local(w);
  }

  /** Where short-circuit writes wait for their commits' answers. */
  Executor commits() {
    return commits;
  }

  /**
   * Orders the workers a new file's content may go to: one on this host first (its cache then
   * serves the reads back short-circuit), then by rendezvous on (inode, 0).
   */
  List<WorkerInfo> writerOrder(List<WorkerInfo> workers, long inode) {
    List<WorkerInfo> order = rank(workers, inode, 0);
    for (int i = 0; i < order.size(); i++) {
      if (local(order.get(i))) {
        order.add(0, order.remove(i));
        break;
      }
    }
    return order;
  }

  /** The blocking stub of worker {@code w}, with no deadline set. */
  WorkerServiceGrpc.WorkerServiceBlockingStub blockingStub(WorkerInfo w) throws IOException {
    return WorkerServiceGrpc.newBlockingStub(channel(w));
  }

  /** The asynchronous stub of worker {@code w}. */
  WorkerServiceGrpc.WorkerServiceStub asyncStub(WorkerInfo w) throws IOException {
    return WorkerServiceGrpc.newStub(channel(w));
  }

  /** Translates the statuses of worker {@code w}. */
  static ErrorTranslator errors(WorkerInfo w) {
    return ErrorTranslator.forWorker(w.getId(), w.getAddress());
  }

  /** The short-circuit client of the worker socket at {@code socket}. */
  ShortCircuit shortCircuit(String socket) throws IOException {
    synchronized (mu) {
      checkOpen();
      return sockets.computeIfAbsent(socket, s -> new ShortCircuit(Path.of(s), timeout));
    }
  }

  private ManagedChannel channel(WorkerInfo w) throws IOException {
    synchronized (mu) {
      checkOpen();
      ManagedChannel ch = channels.get(w.getAddress());
      if (ch == null) {
        try {
          ch = Channels.openWorker(w.getAddress(), tls);
        } catch (IllegalArgumentException e) {
          throw new IOException("worker " + w.getId() + " advertises a bad address \""
              + w.getAddress() + "\"", e);
        }
        channels.put(w.getAddress(), ch);
      }
      return ch;
    }
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("the Strata client is closed");
    }
  }

  @Override
  public void close() {
    List<ManagedChannel> chs;
    List<ShortCircuit> scs;
    synchronized (mu) {
      closed = true;
      chs = new ArrayList<>(channels.values());
      scs = new ArrayList<>(sockets.values());
      channels.clear();
      sockets.clear();
    }
    scs.forEach(ShortCircuit::close);
    commits.shutdown(); // commits awaited still get their answers
    chs.forEach(ManagedChannel::shutdown);
    for (ManagedChannel ch : chs) {
      try {
        if (!ch.awaitTermination(5, TimeUnit.SECONDS)) {
          ch.shutdownNow();
        }
      } catch (InterruptedException e) {
        ch.shutdownNow();
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * This host's name as the workers state theirs (Go's os.Hostname: the kernel's host name), so
   * that a worker on this host is recognised.
   */
  static String localHostName() {
    try {
      String h = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8)
          .trim();
      if (!h.isEmpty()) {
        return h;
      }
    } catch (IOException | RuntimeException e) {
      // Not Linux: ask Java (gethostname(2) as well, when it resolves).
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }
}
