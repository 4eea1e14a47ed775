package io.strata.core.worker;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockReader;
import io.strata.core.block.ReadTarget;
import io.strata.core.error.Op;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataError;
import io.strata.proto.v1.BlockRef;
import io.strata.proto.v1.ChecksumRequest;
import io.strata.proto.v1.ChecksumResponse;
import io.strata.proto.v1.ReadRequest;
import io.strata.proto.v1.ReadResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Reads one file's blocks from the workers (docs/datapath.md, "Reading"; the Go client's
 * read.go): each block from its home worker by rendezvous ranking, short-circuit when that
 * worker is on this host, else through its {@code WorkerService.Read}; a worker that cannot be
 * reached passes the block to the next in rank order (the list of live workers is refreshed
 * once). A worker's answer about the data itself (a missing block, a bad range) is final. Safe for
 * concurrent positioned reads; holds no buffer.
 */
final class WorkerBlockReader implements BlockReader {
  /** The largest range asked of a worker's RPC in one call, so that each has a fair deadline. */
  static final int RPC_PIECE = 16 << 20;

  private static final System.Logger LOG = System.getLogger(WorkerBlockReader.class.getName());

  private final WorkerSet workers;
  private final ReadTarget target;
  private final String path;

  WorkerBlockReader(WorkerSet workers, ReadTarget target) {
    this.workers = workers;
    this.target = target;
    this.path = target.path().toString();
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    return read(position, b, off, len, false);
  }

  @Override
  public int readRandom(long position, byte[] b, int off, int len) throws IOException {
    return read(position, b, off, len, true);
  }

  private int read(long position, byte[] b, int off, int len, boolean random)
      throws IOException {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (position < 0) {
      throw new java.io.EOFException("read " + path + ": negative position " + position);
    }
    if (position >= target.length()) {
      return -1;
    }
    int n = (int) Math.min(len, target.length() - position);
    int done = 0;
    while (done < n) {
      long pos = position + done;
      BlockExtent e = blockAt(pos);
      long in = pos - e.offset();
      int k = (int) Math.min(n - done, e.length() - in);
      readBlock(e, b, off + done, k, in, random);
      done += k;
    }
    return done;
  }

  /** The block holding file offset {@code pos}. */
  private BlockExtent blockAt(long pos) throws IOException {
    List<BlockExtent> blocks = target.blocks();
    int lo = 0;
    int hi = blocks.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      BlockExtent e = blocks.get(mid);
      if (e.offset() + e.length() <= pos) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == blocks.size() || blocks.get(lo).offset() > pos) {
      throw new IOException("read " + path + ": no block holds offset " + pos + " of the "
          + target.length() + "-byte file");
    }
    return blocks.get(lo);
  }

  /** Fills {@code b[off, off+len)} from {@code [in, in+len)} of block {@code e}. */
  private void readBlock(BlockExtent e, byte[] b, int off, int len, long in, boolean random)
      throws IOException {
    onWorkers(e, Op.READ, (w, ref) -> readFrom(w, ref, b, off, len, in, random));
  }

  /**
   * The CRC32C of block {@code e}, which its worker combines from the CRCs its cache keeps of
   * the block's chunks (fetching only the pages it misses).
   */
  int crc(BlockExtent e) throws IOException {
    int[] crc = new int[1];
    onWorkers(e, Op.CHECKSUM, (w, ref) -> {
      ChecksumResponse r;
      try {
        r = workers.blockingStub(w)
            .withDeadlineAfter(workers.timeout().toMillis(), TimeUnit.MILLISECONDS)
            .checksum(ChecksumRequest.newBuilder().addBlocks(ref).build());
      } catch (StatusRuntimeException ex) {
        throw WorkerSet.errors(w).translate(ex, Op.CHECKSUM, path);
      }
      if (r.getCrc32CCount() != 1) {
        throw new IOException("checksum " + path + ": worker " + w.getId() + " answered "
            + r.getCrc32CCount() + " CRCs for one block");
      }
      crc[0] = r.getCrc32C(0);
    });
    return crc[0];
  }

  /** One try of a block at one worker. */
  @FunctionalInterface
  private interface Attempt {
    void at(WorkerInfo w, BlockRef ref) throws IOException;
  }

  /**
   * Tries {@code fn} at block {@code e}'s home worker, then at the next ones in rendezvous order
   * while it fails without a worker's answer (not reached, or a temporary condition), once more
   * with a fresh list of workers.
   */
  private void onWorkers(BlockExtent e, Op op, Attempt fn) throws IOException {
    // A block a concat moved is its object's first file's: named, placed and read by that inode.
    long inode = e.owner(target.inodeId());
    BlockRef.Builder rb = BlockRef.newBuilder().setStoreUri(target.storeUri())
        .setInodeId(inode).setBlockId(e.blockId()).setLength(e.length())
        .setNamespace(target.path().namespace()).setBlockToken(target.tokenOf(e).get());
    if (!target.objectKey().isEmpty()) {
      rb.setObjectKey(target.objectKey()).setObjectOffset(e.offset())
          .setVersion(target.objectVersion());
    }
    BlockRef ref = rb.build();
    List<String> errs = new ArrayList<>();
    IOException last = null;
    for (int attempt = 0; attempt < 2; attempt++) {
      List<WorkerInfo> live = workers.live(op, path, attempt > 0);
      for (WorkerInfo w : WorkerSet.rank(live, inode, e.blockId())) {
        try {
          fn.at(w, ref);
          return;
        } catch (IOException ex) {
          if (ex instanceof StrataError && !(ex instanceof ServiceUnavailableException)) {
            throw ex; // the worker answered: the block itself is the problem
          }
          // Not reached, or a temporary condition (its bucket unavailable): the next worker.
          errs.add("worker " + w.getId() + ": " + ex.getMessage());
          last = ex;
        }
      }
    }
    throw new ServiceUnavailableException(String.format("%s %s: no worker could serve block "
        + "%016x: %s", op == Op.READ ? "read" : "checksum", path, e.blockId(),
        String.join("; ", errs)), last);
  }

  private void readFrom(WorkerInfo w, BlockRef ref, byte[] b, int off, int len, long in,
      boolean random) throws IOException {
    if (workers.local(w)) {
      try {
        workers.shortCircuit(w).read(ref, b, off, len, in, random);
        return;
      } catch (IOException | RuntimeException ex) {
        // The worker's RPC serves the range, or reports the real error.
        LOG.log(Level.DEBUG, () -> "strata: short-circuit read of " + path + " from worker "
            + w.getId() + " failed; reading through its RPC: " + ex);
      }
    }
    for (int done = 0; done < len; ) {
      int piece = Math.min(RPC_PIECE, len - done);
      rpcRead(w, ref, b, off + done, piece, in + done, random);
      done += piece;
    }
  }

  private void rpcRead(WorkerInfo w, BlockRef ref, byte[] b, int off, int len, long in,
      boolean random) throws IOException {
    ReadRequest req = ReadRequest.newBuilder().setBlock(ref).setOffset(in).setLength(len)
        .setRandom(random).build();
    Context.CancellableContext ctx = Context.current().withCancellation();
    Context prev = ctx.attach();
    try {
      Iterator<ReadResponse> it = workers.blockingStub(w)
          .withDeadlineAfter(workers.timeout().toMillis(), TimeUnit.MILLISECONDS).read(req);
      int got = 0;
      while (got < len) {
        if (!it.hasNext()) {
          throw new IOException("read " + path + ": worker " + w.getId() + " sent " + got
              + " of " + len + " bytes");
        }
        ByteString data = it.next().getData();
        if (data.size() > len - got) {
          throw new IOException("read " + path + ": worker " + w.getId() + " sent more than "
              + len + " bytes");
        }
        data.copyTo(b, off + got);
        got += data.size();
      }
    } catch (StatusRuntimeException ex) {
      throw WorkerSet.errors(w).translate(ex, Op.READ, path);
    } finally {
      ctx.detach(prev);
      // Ends the call if the worker has not (it has sent everything asked).
      ctx.cancel(null);
    }
  }

  @Override
  public void close() {
    // Nothing held per file: connections belong to the client.
  }
}
