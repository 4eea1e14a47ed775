package io.strata.core.worker;

import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.ShortCircuitCommit;
import io.strata.proto.v1.ShortCircuitRequest;
import io.strata.proto.v1.ShortCircuitResponse;
import io.strata.proto.v1.WorkerInfo;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;

/**
 * One block written short-circuit (docs/datapath.md, "Writing"): the worker on this host, asked
 * over its Unix socket with the file's write header, creates an empty cache file for a new block
 * and names it; the writer writes the block's bytes into that file itself, then sends a commit
 * with their length on the same connection, and the worker checksums the file, puts it into the
 * bucket and its cache, and answers with the block. No byte crosses gRPC, Netty or protobuf.
 * Closing the connection before the commit abandons the block (the worker deletes the file).
 *
 * <p>Bytes are gathered in a pooled direct buffer and written to the file a buffer at a time.
 * The commit's answer is awaited on {@link WorkerSet#commits}, so that the file's writer goes on
 * with its next block while the worker uploads this one; the wait is bounded by the client's RPC
 * timeout. Not safe for concurrent use (one writer per block), except {@link #abort}.
 */
final class ShortCircuitBlockWriter implements BlockWriter {
  private static final System.Logger LOG =
      System.getLogger(ShortCircuitBlockWriter.class.getName());

  private final WorkerSet workers;
  private final ShortCircuit sc;
  private final WorkerInfo worker;
  private final WriteTarget target;
  private final UnixConnection conn;
  private final FileChannel file;
  private final long blockSize;
  /** Where the buffer goes in the file; null once given back (finishAsync). */
  private ByteBuffer buf;
  /** Bytes written to the file so far, before the buffer's. */
  private long written;
  private final Object lock = new Object();
  // Guarded by lock.
  private boolean aborted;
  /** The commit was answered and the connection given back to the pool. */
  private boolean returned;

  private ShortCircuitBlockWriter(WorkerSet workers, ShortCircuit sc, WorkerInfo worker,
      WriteTarget target, UnixConnection conn, FileChannel file, long blockSize) {
    this.workers = workers;
    this.sc = sc;
    this.worker = worker;
    this.target = target;
    this.conn = conn;
    this.file = file;
    this.blockSize = blockSize;
    this.buf = sc.writeBuffer();
  }

  /**
   * Asks worker {@code w}, which is on this host, for a block of {@code t} to write into its
   * cache file. Returns null if that cannot be done before a byte is written, whatever the
   * reason (the socket unreachable, a worker that does not know short-circuit writes, a refusal,
   * a file this process may not open): the caller writes through the worker's RPC instead, which
   * reports a refusal that is the write's own (its token) as the error it is.
   */
  static ShortCircuitBlockWriter tryOpen(WorkerSet workers, WorkerInfo w, WriteTarget t) {
    UnixConnection c = null;
    try {
      ShortCircuit sc = workers.shortCircuit(w.getUnixSocket());
      c = sc.take();
      c.send(ShortCircuitRequest.newBuilder().setWrite(WorkerBlockWriter.header(t)).build());
      ShortCircuitResponse r = c.receive(ShortCircuitResponse.parser());
      if (!r.getOk()) {
        throw new IOException("refused: " + r.getError());
      }
      if (r.getPath().isEmpty() || r.getBlockSize() != t.blockSize()) {
        // A worker from before short-circuit writes takes the request for a read.
        throw new IOException("the worker does not write short-circuit blocks of "
            + t.blockSize() + " bytes (block size " + r.getBlockSize() + ")");
      }
      FileChannel f = FileChannel.open(Path.of(r.getPath()), StandardOpenOption.WRITE);
      return new ShortCircuitBlockWriter(workers, sc, w, t, c, f, r.getBlockSize());
    } catch (IOException | RuntimeException e) {
      if (c != null) {
        c.close(); // abandons the block, if the worker made one
      }
      LOG.log(Level.DEBUG, () -> "strata: short-circuit write of " + t.path() + " to worker "
          + w.getId() + " failed; writing through its RPC: " + e);
      return null;
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    checkOpen();
    if (buf == null) {
      throw new IOException("write " + target.path() + ": the block is finished");
    }
    if (len > blockSize - written - buf.position()) {
      throw new IOException("write " + target.path() + ": more than the block's " + blockSize
          + " bytes");
    }
    while (len > 0) {
      int n = Math.min(len, buf.remaining());
      buf.put(b, off, n);
      off += n;
      len -= n;
      if (!buf.hasRemaining()) {
        drain();
      }
    }
  }

  /** Writes the buffer to the file at {@link #written}. */
  private void drain() throws IOException {
    buf.flip();
    try {
      while (buf.hasRemaining()) {
        written += file.write(buf, written);
      }
    } catch (IOException e) {
      checkOpen(); // an abort closed the file: say so
      throw new IOException("write " + target.path() + ": the cache file of worker "
          + worker.getId() + ": " + e, e);
    } finally {
      buf.clear();
    }
  }

  @Override
  public List<BlockExtent> finish() throws IOException {
    return BlockWriter.await(finishAsync(), this::abort);
  }

  /**
   * Writes what is buffered, closes the file and sends the commit; the future completes once
   * the worker answered with the block (in the bucket), or failed, or did not answer within the
   * RPC timeout.
   */
  @Override
  public CompletableFuture<List<BlockExtent>> finishAsync() {
    if (buf == null) {
      return CompletableFuture.failedFuture(new IOException("write " + target.path()
          + ": the block is finished already"));
    }
    try {
      checkOpen();
      drain();
    } catch (IOException e) {
      abort();
      return CompletableFuture.failedFuture(e);
    } finally {
      sc.release(buf); // only this thread touches the buffer: an abort leaves it be
      buf = null;
    }
    long length = written;
    try {
      file.close();
      conn.send(ShortCircuitRequest.newBuilder()
          .setCommit(ShortCircuitCommit.newBuilder().setLength(length)).build());
    } catch (IOException | RuntimeException e) {
      abort();
      return CompletableFuture.failedFuture(failure("could not commit", e));
    }
    try {
      return CompletableFuture.supplyAsync(() -> awaitCommit(length), workers.commits());
    } catch (RejectedExecutionException e) {
      abort();
      return CompletableFuture.failedFuture(new IOException("write " + target.path()
          + ": the Strata client is closed", e));
    }
  }

  /** Waits for the commit's answer and returns the block it names. */
  private List<BlockExtent> awaitCommit(long length) {
    ShortCircuitResponse r;
    try {
      r = conn.receive(ShortCircuitResponse.parser());
    } catch (IOException | RuntimeException e) {
      abort();
      throw new CompletionException(failure("did not answer the commit", e));
    }
    Block b = r.getBlock();
    IOException bad = null;
    if (!r.getOk()) {
      String msg = "write " + target.path() + ": worker " + worker.getId()
          + " did not store the block: " + r.getError();
      bad = r.getUnavailable() ? new ServiceUnavailableException(msg, null)
          : new IOException(msg);
    } else if (!r.hasBlock() || b.getOffset() != 0 || b.getLength() != length) {
      bad = new IOException("write " + target.path() + ": worker " + worker.getId()
          + " stored " + b.getLength() + " bytes at " + b.getOffset() + " of " + length);
    }
    if (bad != null) {
      abort();
      throw new CompletionException(bad);
    }
    synchronized (lock) {
      if (!aborted) {
        returned = true;
        sc.give(conn);
      }
    }
    return List.of(new BlockExtent(b.getBlockId(), 0, length));
  }

  /** Closes the connection, which abandons the block unless it was committed, and the file. */
  @Override
  public void abort() {
    synchronized (lock) {
      if (aborted || returned) {
        return;
      }
      aborted = true;
      conn.close();
    }
    try {
      file.close();
    } catch (IOException ignored) {
      // The block is abandoned: nothing more to do with the file.
    }
  }

  private void checkOpen() throws IOException {
    synchronized (lock) {
      if (aborted) {
        throw new IOException("write " + target.path() + ": the block's write was given up");
      }
    }
  }

  /** The failure {@code e} of the conversation with the worker, as the writer reports it. */
  private IOException failure(String what, Throwable e) {
    String msg = "write " + target.path() + ": worker " + worker.getId() + " (short-circuit) "
        + what + ": " + e.getMessage();
    IOException out = e instanceof SocketTimeoutException ? new SocketTimeoutException(msg)
        : new IOException(msg);
    out.initCause(e);
    return out;
  }
}
