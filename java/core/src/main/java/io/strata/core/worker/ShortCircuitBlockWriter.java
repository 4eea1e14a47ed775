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
 * <p>Bytes are gathered in a pooled direct buffer of {@link ShortCircuit#WRITE_BUFFER} bytes and
 * written to the file a buffer at a time. The block is asked for only once the buffer is full
 * and more comes, or at the end, as the Go client does: a small file's block, or a file's last,
 * then says its length, and the worker sets aside that much room rather than a whole block. If
 * the worker does not take the block (its socket unreachable, a worker from before short-circuit
 * writes, a refusal, a file this process may not open), nothing was written yet: the block goes
 * to a stream instead ({@link WorkerBlockWriter#open}), which reports a refusal that is the
 * write's own (its token) as the error it is.
 *
 * <p>The commit's answer is awaited on {@link WorkerSet#commits}, so that the file's writer goes
 * on with its next block while the worker uploads this one; the wait is bounded by the client's
 * RPC timeout. Not safe for concurrent use (one writer per block), except {@link #abort}.
 */
final class ShortCircuitBlockWriter implements BlockWriter {
  private static final System.Logger LOG =
      System.getLogger(ShortCircuitBlockWriter.class.getName());

  /** A block a worker took: the connection that commits it, its file, and its room. */
  record Opened(UnixConnection conn, FileChannel file, long room) {}

  private final WorkerSet workers;
  private final ShortCircuit sc;
  private final WorkerInfo worker;
  private final WriteTarget target;
  /** The most the block may hold: the block size, or the room the worker gave. */
  private long limit;
  /** Bytes waiting for the file; null once given back (finishAsync, or the stream took them). */
  private ByteBuffer buf;
  /** Bytes written to the file so far, before the buffer's. */
  private long written;
  private final Object lock = new Object();
  // Set under lock (read without it by the writer's thread, which sets them).
  private Opened open;
  /** The stream the block went to instead, if the worker did not take it. */
  private BlockWriter stream;
  // Guarded by lock.
  private boolean aborted;
  /** The commit was answered and the connection given back to the pool. */
  private boolean returned;

  private ShortCircuitBlockWriter(WorkerSet workers, ShortCircuit sc, WorkerInfo worker,
      WriteTarget target) {
    this.workers = workers;
    this.sc = sc;
    this.worker = worker;
    this.target = target;
    this.limit = target.blockSize();
    this.buf = sc.writeBuffer();
  }

  /** A writer of a block of {@code t} for worker {@code w}, which is on this host. */
  static ShortCircuitBlockWriter open(WorkerSet workers, WorkerInfo w, WriteTarget t)
      throws IOException {
    return new ShortCircuitBlockWriter(workers, workers.shortCircuit(w), w, t);
  }

  /**
   * Asks worker {@code w} for a new block of {@code t} to write into its cache file, of {@code
   * length} bytes if known (else 0). Returns null if it cannot be had, whatever the reason (the
   * connection is then closed).
   */
  static Opened tryOpen(WorkerSet workers, WorkerInfo w, WriteTarget t, long length) {
    UnixConnection c = null;
    try {
      c = workers.shortCircuit(w).take();
      c.send(ShortCircuitRequest.newBuilder().setWrite(WorkerBlockWriter.header(t))
          .setLength(length).build());
      ShortCircuitResponse r = c.receive(ShortCircuitResponse.parser());
      if (!r.getOk()) {
        throw new IOException("refused: " + r.getError());
      }
      long room = length > 0 ? length : t.blockSize();
      if (r.getPath().isEmpty() || r.getBlockSize() != room) {
        // A worker from before short-circuit writes takes the request for a read.
        throw new IOException("the worker does not write short-circuit blocks of " + room
            + " bytes (block size " + r.getBlockSize() + ")");
      }
      return new Opened(c, FileChannel.open(Path.of(r.getPath()), StandardOpenOption.WRITE),
          room);
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
    if (stream != null) {
      stream.write(b, off, len);
      return;
    }
    if (buf == null) {
      throw new IOException("write " + target.path() + ": the block is finished");
    }
    if (len > limit - written - buf.position()) {
      throw new IOException("write " + target.path() + ": more than the block's " + limit
          + " bytes");
    }
    while (len > 0) {
      if (!buf.hasRemaining()) {
        if (open == null && !start(0)) {
          stream.write(b, off, len);
          return;
        }
        drain();
      }
      int n = Math.min(len, buf.remaining());
      buf.put(b, off, n);
      off += n;
      len -= n;
    }
  }

  /**
   * Asks the worker for the block ({@code length} bytes if known, else 0); returns false if it
   * went to a stream instead ({@link #toStream}).
   */
  private boolean start(long length) throws IOException {
    Opened o = tryOpen(workers, worker, target, length);
    if (o != null) {
      synchronized (lock) {
        if (!aborted) {
          open = o;
          limit = o.room();
          return true;
        }
      }
      o.conn().close();
      o.file().close();
      checkOpen();
    }
    toStream();
    return false;
  }

  /** Sends the block, and the bytes buffered, to a stream instead. */
  private void toStream() throws IOException {
    BlockWriter s = WorkerBlockWriter.open(workers, target);
    synchronized (lock) {
      if (!aborted) {
        stream = s;
      }
    }
    if (stream == null) {
      s.abort();
      checkOpen();
    }
    buf.flip();
    byte[] pending = new byte[buf.remaining()];
    buf.get(pending);
    sc.release(buf);
    buf = null;
    s.write(pending, 0, pending.length);
  }

  /** Writes the buffer to the file at {@link #written}. */
  private void drain() throws IOException {
    buf.flip();
    try {
      while (buf.hasRemaining()) {
        written += open.file().write(buf, written);
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
    if (stream != null) {
      return stream.finishAsync();
    }
    if (buf == null) {
      return CompletableFuture.failedFuture(new IOException("write " + target.path()
          + ": the block is finished already"));
    }
    try {
      checkOpen();
      if (open == null) {
        if (buf.position() > 0) {
          start(buf.position());
        } else {
          toStream(); // an empty block (a file's writer makes none), as a stream has it
        }
        if (stream != null) {
          return stream.finishAsync();
        }
      }
      drain();
    } catch (IOException e) {
      abort();
      return CompletableFuture.failedFuture(e);
    } finally {
      if (buf != null) {
        sc.release(buf); // only this thread touches the buffer: an abort leaves it be
        buf = null;
      }
    }
    long length = written;
    try {
      open.file().close();
      open.conn().send(ShortCircuitRequest.newBuilder()
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
      r = open.conn().receive(ShortCircuitResponse.parser());
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
        sc.give(open.conn());
      }
    }
    return List.of(new BlockExtent(b.getBlockId(), 0, length));
  }

  /**
   * Closes the connection, which abandons the block unless it was committed, and the file; or
   * aborts the stream the block went to.
   */
  @Override
  public void abort() {
    Opened o;
    BlockWriter s;
    synchronized (lock) {
      if (aborted || returned) {
        return;
      }
      aborted = true;
      o = open;
      s = stream;
    }
    if (s != null) {
      s.abort();
    }
    if (o != null) {
      o.conn().close();
      try {
        o.file().close();
      } catch (IOException ignored) {
        // The block is abandoned: nothing more to do with the file.
      }
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
