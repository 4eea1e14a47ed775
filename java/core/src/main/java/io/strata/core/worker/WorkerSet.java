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

  private static final System.Logger LOG = System.getLogger(WorkerSet.class.getName());

  private final WorkerBlockIO.Directory directory;
  /** Where the workers' sockets are shared into this client's container; null: at their paths. */
  private final Path scDir;
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
  /** By worker id: what {@link #local} found at its socket. */
  private final Map<String, Found> found = new HashMap<>();
  /** Why not short-circuit, logged once ({@link #whyNot}). */
  private final Set<String> told = new HashSet<>();
  private boolean closed;
  private final Tls tls;

  WorkerSet(WorkerBlockIO.Directory directory, Path scDir, boolean shortCircuit,
      Duration timeout) {
    this(directory, scDir, shortCircuit, timeout, Tls.fromEnvironment());
  }

  WorkerSet(WorkerBlockIO.Directory directory, Path scDir, boolean shortCircuit,
      Duration timeout, Tls tls) {
    this(directory, scDir, shortCircuit, shortCircuit, timeout, tls);
  }

  /**
   * The workers {@code directory} lists, for a client that finds their sockets in {@code scDir}
   * (null: at the paths the workers made them); short-circuit reads with {@code shortCircuit},
   * short-circuit writes with both it and {@code shortCircuitWrites}.
   */
  WorkerSet(WorkerBlockIO.Directory directory, Path scDir, boolean shortCircuit,
      boolean shortCircuitWrites, Duration timeout, Tls tls) {
    this.tls = tls;
    this.directory = directory;
    this.scDir = scDir;
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

  /** What {@link #local} found at a worker's socket, and when. */
  private record Found(com.google.protobuf.ByteString key, String path, String why, long at) {}

  /**
   * Reports whether the client reads and writes {@code w}'s blocks short-circuit: short-circuit
   * is on and {@code w} proved itself at its socket ({@link ShortCircuitHello}), whatever the
   * host names. The answer holds for {@link #LIST_TTL}, as the list that named the worker does:
   * local is asked on every read.
   */
  boolean local(WorkerInfo w) {
    if (!shortCircuit || w.getUnixSocket().isEmpty()) {
      return false;
    }
    String path = socket(w);
    Found f;
    synchronized (mu) {
      f = found.get(w.getId());
    }
    long now = System.nanoTime();
    if (f != null && f.key().equals(w.getScKey()) && f.path().equals(path)
        && now - f.at() < LIST_TTL.toNanos()) {
      return f.why() == null;
    }
    String why;
    try {
      why = ShortCircuitHello.prove(shortCircuit(w), Path.of(path), w);
    } catch (IOException e) { // the client is closed
      why = String.valueOf(e.getMessage());
    }
    synchronized (mu) {
      found.put(w.getId(), new Found(w.getScKey(), path, why, now));
    }
    if (why != null) {
      whyNot(w, path, why);
    }
    return why == null;
  }

  /** Where the client looks for {@code w}'s socket: in the socket directory by its name, if set. */
  String socket(WorkerInfo w) {
    if (scDir == null) {
      return w.getUnixSocket();
    }
    Path name = Path.of(w.getUnixSocket()).getFileName();
    return scDir.resolve(name == null ? Path.of("") : name).toString();
  }

  /**
   * Logs, once per worker and socket path, why the client does not read from {@code w}
   * short-circuit. A socket not there is logged once for the client: every worker of another
   * machine has none, and that is no news, but a client in a container whose workers' sockets
   * were never shared with it would otherwise read everything over the network without a word.
   */
  private void whyNot(WorkerInfo w, String path, String why) {
    boolean none = why.equals(ShortCircuitHello.NO_SOCKET);
    synchronized (mu) {
      if (!told.add(none ? "no socket" : w.getId() + "\0" + path)) {
        return;
      }
    }
    if (none) {
      LOG.log(System.Logger.Level.INFO, "strata: reading over the network from workers whose "
          + "short-circuit socket this client cannot see (set fs.strata.shortcircuit.dir to "
          + "where the workers'' sockets are shared): worker {0} at {1}, socket {2}", w.getId(),
          w.getAddress(), path);
      return;
    }
    LOG.log(System.Logger.Level.WARNING, "strata: no short-circuit to worker {0} at {1} whose "
        + "socket {2} this client found ({3}); reading over the network", w.getId(),
        w.getAddress(), path, why);
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
   * Orders the workers a new file's content may go to: one whose socket this client reaches
   * first (its cache then serves the reads back short-circuit), then by rendezvous on (inode,
   * 0).
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

  /** The short-circuit client of {@code w}'s socket (where {@link #socket} finds it). */
  ShortCircuit shortCircuit(WorkerInfo w) throws IOException {
    String socket = socket(w);
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
}
