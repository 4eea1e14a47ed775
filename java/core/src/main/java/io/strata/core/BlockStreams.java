package io.strata.core;

import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * A block-mode file's content past the inline limit, as its {@link FileWriter} streams it (the
 * Go client's blockSet, internal/client/write.go): one {@link BlockWriter} (a worker stream) per
 * block, so that the writer learns of each block as soon as its worker has it in the bucket, and
 * a flush can commit it. A full block's stream is finished in the background while the next one
 * starts, with at most {@link #BLOCKS_IN_FLIGHT} awaited at once.
 *
 * <p>Once the writer has flushed, the bytes of the current block written since the last flush
 * are kept, to be sent as the file's tail by the next flush (the service holds them until a
 * block does). The first flush ends the current block early instead, since its bytes before the
 * flush were not kept.
 *
 * <p>Not thread-safe: its writer calls it under its own lock.
 */
final class BlockStreams {
  /** Finished blocks of one writer its workers may still be uploading, as in the Go client. */
  static final int BLOCKS_IN_FLIGHT = 4;

  /**
   * The largest tail a flush sends. A writer that wrote more since its last flush ends the
   * current block early instead (blocks may be shorter than the block size), so that a flush's
   * request, and the service's log entry, stay small whatever the block size.
   */
  static final int MAX_FLUSH_TAIL = 8 << 20;

  /** What a flush commits: finished blocks, and the bytes after them at {@code tailOffset}. */
  record FlushContent(List<BlockExtent> blocks, long tailOffset, byte[] tail) {}

  /** A finished block's stream whose worker is uploading it. */
  private record Pending(long start, BlockWriter writer, CompletableFuture<List<BlockExtent>> done) {}

  private final BlockIO io;
  private final WriteTarget target;
  private final Semaphore inFlight = new Semaphore(BLOCKS_IN_FLIGHT);
  private final List<Pending> pending = new ArrayList<>();
  private BlockWriter cur;
  private long curStart;
  private long curLen;
  /** File offset of the next byte. */
  private long off;
  private boolean flushed;
  /** The current block's bytes {@code [keepStart, keepStart + keepLen)}, once flushed. */
  private byte[] keep = new byte[0];
  private int keepLen;
  private long keepStart;
  /**
   * More than {@link #MAX_FLUSH_TAIL} bytes were written since the last flush: they are not
   * kept, and the next flush ends the block instead of sending them.
   */
  private boolean keepOverflow;

  /** Content of {@code target} from file offset {@code start}. */
  BlockStreams(BlockIO io, WriteTarget target, long start) {
    this.io = io;
    this.target = target;
    this.off = start;
  }

  /** Appends {@code b[o, o+len)}, opening and ending block streams as blocks fill. */
  void write(byte[] b, int o, int len) throws IOException {
    long blockSize = target.blockSize();
    while (len > 0) {
      if (cur == null) {
        cur = io.openWriter(target);
        curStart = off;
        curLen = 0;
        keepStart = off;
        keepLen = 0;
        keepOverflow = false;
      }
      int n = (int) Math.min(len, blockSize - curLen);
      cur.write(b, o, n);
      if (flushed) {
        keepBytes(b, o, n);
      }
      curLen += n;
      off += n;
      o += n;
      len -= n;
      if (curLen == blockSize) {
        endBlock();
      }
    }
  }

  /**
   * Finishes the current block's stream (if any): the worker's answer comes in the background.
   * Waits while {@link #BLOCKS_IN_FLIGHT} are awaited already.
   */
  void endBlock() throws IOException {
    if (cur == null) {
      return;
    }
    BlockWriter w = cur;
    long start = curStart;
    cur = null;
    try {
      inFlight.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      w.abort();
      throw new InterruptedIOException("write " + target.path() + ": interrupted");
    }
    CompletableFuture<List<BlockExtent>> f = w.finishAsync();
    f.whenComplete((v, err) -> inFlight.release());
    pending.add(new Pending(start, w, f));
  }

  /** Waits for the blocks in flight and returns them in file order; none is pending after. */
  List<BlockExtent> finished() throws IOException {
    List<BlockExtent> out = new ArrayList<>(pending.size());
    IOException failed = null;
    for (Pending p : pending) {
      try {
        List<BlockExtent> got = BlockWriter.await(p.done(), this::abort);
        if (got.size() != 1) {
          throw new IOException("write " + target.path() + ": the worker made " + got.size()
              + " blocks of one block's stream");
        }
        out.add(new BlockExtent(got.get(0).blockId(), p.start(), got.get(0).length()));
      } catch (IOException e) {
        if (failed == null) {
          failed = e;
        } else {
          failed.addSuppressed(e);
        }
      }
    }
    pending.clear();
    if (failed != null) {
      throw failed;
    }
    return out;
  }

  /**
   * What a flush commits now, the file's visible length being {@code visible}: the blocks
   * finished since the last flush (waited for), and the bytes written after them and after
   * {@code visible}.
   */
  FlushContent flushContent(long visible) throws IOException {
    if (!flushed) {
      endBlock(); // blocks hold everything written so far; from now on bytes are kept
      flushed = true;
    }
    List<BlockExtent> done = finished();
    long end = Math.max(visible, end(done, visible));
    if (cur != null && (keepOverflow || off - end > MAX_FLUSH_TAIL)) {
      endBlock();
      done = new ArrayList<>(done);
      done.addAll(finished());
      end = end(done, end);
    }
    if (cur == null || end >= off) {
      return new FlushContent(done, end, new byte[0]);
    }
    if (end < keepStart) {
      throw new IllegalStateException("write " + target.path() + ": the tail from " + end
          + " is not kept (kept from " + keepStart + ")");
    }
    int from = (int) (end - keepStart);
    return new FlushContent(done, end, Arrays.copyOfRange(keep, from, keepLen));
  }

  /** A flush committed the file up to {@code visible}: the bytes before it are not kept. */
  void committed(long visible) {
    if (cur == null || visible <= keepStart) {
      return;
    }
    int drop = (int) Math.min(keepLen, visible - keepStart);
    System.arraycopy(keep, drop, keep, 0, keepLen - drop);
    keepLen -= drop;
    keepStart += drop;
  }

  /** Gives the write up: cancels the current stream and those of the blocks in flight. */
  void abort() {
    if (cur != null) {
      cur.abort();
      cur = null;
    }
    for (Pending p : pending) {
      p.writer().abort();
    }
  }

  private static long end(List<BlockExtent> blocks, long none) {
    if (blocks.isEmpty()) {
      return none;
    }
    BlockExtent last = blocks.get(blocks.size() - 1);
    return last.offset() + last.length();
  }

  private void keepBytes(byte[] b, int o, int n) {
    if (keepOverflow || keepLen + n > MAX_FLUSH_TAIL) {
      keepOverflow = true;
      return;
    }
    if (keepLen + n > keep.length) {
      keep = Arrays.copyOf(keep, Math.max(keepLen + n, Math.min(MAX_FLUSH_TAIL, 2 * keep.length)));
    }
    System.arraycopy(b, o, keep, keepLen, n);
    keepLen += n;
  }
}
