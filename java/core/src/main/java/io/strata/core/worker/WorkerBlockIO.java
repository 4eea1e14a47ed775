package io.strata.core.worker;

import io.grpc.StatusRuntimeException;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockLocation;
import io.strata.core.block.BlockReader;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.ReadTarget;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.Op;
import io.strata.core.rpc.Tls;
import io.strata.proto.v1.WorkerInfo;
import io.strata.proto.v1.WorkerStats;
import io.strata.proto.v1.WorkerStatsRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The data path through the workers (docs/datapath.md): writes go to a worker, preferably one
 * on this host, whose cache file each block is then written into directly ({@link
 * ShortCircuitBlockWriter}), else streamed to its RPC ({@link WorkerBlockWriter}); reads go to
 * each block's home worker by rendezvous placement, short-circuit through the worker's cache
 * file when it is on this host ({@link WorkerBlockReader}, {@link ShortCircuit}). The client's
 * default {@link BlockIO}. Safe for concurrent use.
 */
public final class WorkerBlockIO implements BlockIO {
  /** Where the live workers come from: the namespace service's ListWorkers. */
  @FunctionalInterface
  public interface Directory {
    /** Returns the live workers. */
    List<WorkerInfo> listWorkers() throws IOException;
  }

  private final WorkerSet workers;

  /**
   * Creates the data path over the workers {@code directory} lists. With {@code shortCircuit}
   * off, even a worker on this host is read through its RPC. {@code timeout} bounds each call to
   * a worker and each wait on one.
   */
  public WorkerBlockIO(Directory directory, boolean shortCircuit, Duration timeout) {
    this(directory, shortCircuit, timeout, Tls.fromEnvironment());
  }

  /** As above, connecting to the workers with {@code tls}. */
  public WorkerBlockIO(Directory directory, boolean shortCircuit, Duration timeout, Tls tls) {
    this(directory, shortCircuit, shortCircuit, timeout, tls);
  }

  /**
   * As above; with {@code shortCircuitWrites} off (or {@code shortCircuit}), a worker on this
   * host is written through its RPC.
   */
  public WorkerBlockIO(Directory directory, boolean shortCircuit, boolean shortCircuitWrites,
      Duration timeout, Tls tls) {
    this(directory, null, shortCircuit, shortCircuitWrites, timeout, tls);
  }

  /**
   * As above, finding the workers' short-circuit sockets in {@code scDir} by their names (where
   * they are shared into this client's container), or at their paths if null.
   */
  public WorkerBlockIO(Directory directory, Path scDir, boolean shortCircuit,
      boolean shortCircuitWrites, Duration timeout, Tls tls) {
    this(new WorkerSet(directory, scDir, shortCircuit, shortCircuitWrites, timeout, tls));
  }

  /** As above, with the sockets at their paths and short-circuit writes as reads (tests). */
  WorkerBlockIO(Directory directory, boolean shortCircuit, Duration timeout, Path scDir) {
    this(new WorkerSet(directory, scDir, shortCircuit, timeout));
  }

  /** Over {@code workers} (tests). */
  WorkerBlockIO(WorkerSet workers) {
    this.workers = workers;
  }

  /**
   * Opens a writer of one block (block mode) short-circuit, into a cache file of the worker on
   * this host, when the writer order puts such a worker first (the block goes to a stream if
   * that worker does not take it); else, and for cache mode's object, a stream to a worker's RPC
   * ({@link WorkerBlockWriter}).
   */
  @Override
  public BlockWriter openWriter(WriteTarget target) throws IOException {
    if (target.objectKey().isEmpty()) {
      List<WorkerInfo> live = workers.live(Op.WRITE, target.path().toString(), false);
      WorkerInfo first = workers.writerOrder(live, target.inodeId()).get(0);
      if (workers.writesShortCircuit(first)) {
        return ShortCircuitBlockWriter.open(workers, first, target);
      }
    }
    return WorkerBlockWriter.open(workers, target);
  }

  @Override
  public BlockReader openReader(ReadTarget target) {
    return new WorkerBlockReader(workers, target);
  }

  /**
   * The CRC32C of each block, from its home worker (or the next in rank), which combines the
   * CRCs its cache keeps of the block's chunks: no cached byte is read.
   */
  @Override
  public int[] blockCrcs(ReadTarget target) throws IOException {
    WorkerBlockReader r = new WorkerBlockReader(workers, target);
    int[] out = new int[target.blocks().size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = r.crc(target.blocks().get(i));
    }
    return out;
  }

  /** The home worker of each block (rendezvous placement over the live workers). */
  @Override
  public List<BlockLocation> locate(ReadTarget target) throws IOException {
    List<WorkerInfo> live = workers.live(Op.OPEN, target.path().toString(), false);
    List<BlockLocation> out = new ArrayList<>(target.blocks().size());
    for (BlockExtent e : target.blocks()) {
      WorkerInfo home = WorkerSet.rank(live, e.owner(target.inodeId()), e.blockId()).get(0);
      out.add(new BlockLocation(e.offset(), e.length(), home.getId(), home.getAddress(),
          home.getHost()));
    }
    return out;
  }

  /** Returns the counters of every live worker (as {@code strata admin workers} shows them). */
  public List<WorkerStats> stats() throws IOException {
    List<WorkerStats> out = new ArrayList<>();
    for (WorkerInfo w : workers.live(Op.ADMIN, "workers", true)) {
      try {
        out.add(workers.blockingStub(w)
            .withDeadlineAfter(workers.timeout().toMillis(), TimeUnit.MILLISECONDS)
            .stats(WorkerStatsRequest.getDefaultInstance()));
      } catch (StatusRuntimeException e) {
        throw WorkerSet.errors(w).translate(e, Op.ADMIN, "worker " + w.getId());
      }
    }
    return out;
  }

  /** Closes the connections to the workers. */
  @Override
  public void close() {
    workers.close();
  }
}
