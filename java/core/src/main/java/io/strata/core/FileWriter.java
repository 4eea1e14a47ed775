package io.strata.core;

import com.google.protobuf.ByteString;
import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.Op;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.CompleteRequest;
import io.strata.proto.v1.FlushRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * A file being written, created or appended to (the Go client's Writer, internal/client/file.go).
 * It exists from create (or append) on; what is written becomes visible, whole, when {@link
 * #close} commits it (Complete), or as far as written when {@link #hflush} or {@link #hsync}
 * does (Flush: visible to every reader that opens the file afterwards, and durable, since the
 * service logs it before it answers). Content up to the inline limit is buffered and committed
 * inline; past the limit it streams to the {@link BlockIO} (workers), in block mode one stream
 * per block ({@link BlockStreams}). The client's lease on the file is renewed until close.
 *
 * <p>When the data path fails (in a write, a flush, or close while the workers finish the
 * blocks), the writer gives up at once: its streams to workers are cancelled and, if nothing of
 * it was ever visible (a new file never flushed), the file is removed, only if its path still
 * names the inode this writer created (a conditional delete), so that a partial file is never
 * visible and a newer file of the same name is never touched. A flushed or appended file is left
 * for lease recovery, which closes it with what was flushed. Further writes fail, and close
 * (which releases the lease) reports the failure again, so that a caller that ignored it still
 * learns of it.
 *
 * <p>Methods are synchronized (one writer per file, but close, and HBase's syncs, come from
 * other threads); a flush waits for the service's answer without the lock, so that writes go on
 * meanwhile, and flushes are sent one at a time, each with what was written before it started.
 */
public final class FileWriter extends OutputStream implements FileOutput {
  private final StrataClient client;
  private final WriteTarget target;
  private final BlockIO blockIO;
  /** The file existed before this writer (an append): a failure never removes it. */
  private final boolean appended;
  /** File offset of this writer's first byte: 0, or where an append's first block starts. */
  private final long base;
  private final byte[] one = new byte[1];
  /** The content from {@link #base} while it fits inline. */
  private byte[] buf;
  private int count;
  /** File offset of the next byte: the file's length as written so far. */
  private long length;
  /** The file's length the service stated last: where the next flush's tail starts. */
  private long visible;
  /** Block mode, past the inline limit. */
  private BlockStreams blocks;
  /** Cache mode, past the inline limit: the stream of the file's object. */
  private BlockWriter object;
  /** A Flush call is in flight (sent without the lock). */
  private boolean flushing;
  /**
   * An hflush since the last hsync made what it sent lasting, not durable: an hsync with nothing
   * new still asks.
   */
  private boolean unsynced;
  private IOException failure;
  private boolean removed;
  private boolean closed;

  FileWriter(StrataClient client, WriteTarget target, BlockIO blockIO) {
    this(client, target, blockIO, false, 0, new byte[256], 0);
  }

  private FileWriter(StrataClient client, WriteTarget target, BlockIO blockIO, boolean appended,
      long length, byte[] inline, int inlineLen) {
    this.client = client;
    this.target = target;
    this.blockIO = blockIO;
    this.appended = appended;
    this.base = length - inlineLen;
    this.buf = inline;
    this.count = inlineLen;
    this.length = length;
    this.visible = length;
  }

  /**
   * A writer appending to a file of {@code length} bytes. {@code inline} is the content of a file
   * that was stored inline, which the writer writes again first (it becomes the start of the
   * writer's first block, or inline content once more).
   */
  static FileWriter appending(StrataClient client, WriteTarget target, BlockIO blockIO,
      long length, byte[] inline) {
    return new FileWriter(client, target, blockIO, true, length, inline, inline.length);
  }

  /** The file being written. */
  public StrataPath path() {
    return target.path();
  }

  /** The file's length as written so far: its length before an append, plus what was written. */
  public synchronized long length() {
    return length;
  }

  /**
   * Whether {@link #hflush} and {@link #hsync} are supported: in a block-mode namespace; a
   * cache-mode file is one object in the bucket, visible once closed only.
   */
  public boolean canSync() {
    return target.objectKey().isEmpty();
  }

  @Override
  public synchronized void write(int b) throws IOException {
    one[0] = (byte) b;
    write(one, 0, 1);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    checkWritable("write");
    try {
      if (blocks == null && object == null && (long) count + len <= target.inlineLimit()) {
        buffer(b, off, len);
      } else {
        stream(b, off, len);
      }
    } catch (IOException e) {
      fail(e);
      throw e;
    }
    length += len;
  }

  /**
   * Has nothing to do: content becomes visible at close, or at {@link #hflush}. (Streams
   * wrapping this one flush often; a flush to the service each time would cost a log entry.)
   */
  @Override
  public void flush() throws IOException {
    if (closed) {
      throw new IOException("flush " + path() + ": stream is closed");
    }
  }

  /**
   * Makes what was written so far visible to every reader that opens the file afterwards
   * (HDFS's hflush), and durable: the service logs it before it answers, so it survives the loss
   * of this writer and of any worker.
   *
   * @throws UnsupportedOperationException in a cache-mode namespace
   */
  public void hflush() throws IOException {
    sync(false);
  }

  /**
   * As {@link #hflush}, durable (HDFS's hsync): the service syncs its log on a quorum of members
   * before it answers. An hflush alone survives the kill of any process, not a power cut of the
   * service's machines (docs/datapath.md, "Flushes").
   */
  public void hsync() throws IOException {
    sync(true);
  }

  private void sync(boolean hsync) throws IOException {
    FlushRequest req;
    synchronized (this) {
      awaitFlush();
      checkWritable("flush");
      if (!canSync()) {
        throw new UnsupportedOperationException("flush " + path() + ": a file of a cache-mode "
            + "namespace is visible once closed only (it is one object in the bucket)");
      }
      FlushRequest.Builder r = FlushRequest.newBuilder();
      try {
        flushContent(r);
      } catch (IOException e) {
        fail(e);
        throw e;
      }
      if (r.getBlocksCount() == 0 && r.getTailData().isEmpty() && !(hsync && unsynced)) {
        return;
      }
      req = r.setHeader(client.header(MetaServiceGrpc.getFlushMethod(), path().namespace()))
          .setPath(path().path()).setInodeId(target.inodeId()).setSync(hsync).build();
      flushing = true;
    }
    long now;
    try {
      now = client.flush(path(), req, target.token());
    } catch (IOException e) {
      synchronized (this) {
        flushing = false;
        notifyAll();
        fail(e);
      }
      throw e;
    }
    synchronized (this) {
      visible = now;
      unsynced = !hsync;
      if (blocks != null) {
        blocks.committed(now);
      }
      flushing = false;
      notifyAll();
    }
  }

  /** Fills {@code r} with what to commit: finished blocks and the bytes after them. */
  private void flushContent(FlushRequest.Builder r) throws IOException {
    if (blocks == null) {
      int from = (int) (visible - base);
      r.setTailOffset(visible).setTailData(ByteString.copyFrom(buf, from, count - from));
      return;
    }
    BlockStreams.FlushContent c = blocks.flushContent(visible);
    for (BlockExtent e : c.blocks()) {
      r.addBlocks(block(e));
    }
    if (c.tail().length > 0) {
      r.setTailOffset(c.tailOffset()).setTailData(ByteString.copyFrom(c.tail()));
    }
  }

  /** Commits the content and releases the lease. Idempotent. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    awaitFlush();
    closed = true;
    try {
      if (failure != null) {
        throw new IOException("close " + path() + ": the write failed" + (removed
            ? " and the file was removed: " : " (the file keeps what was flushed before; lease "
            + "recovery closes it): ") + failure.getMessage(), failure);
      }
      CompleteRequest.Builder req = CompleteRequest.newBuilder().setLength(length);
      try {
        completeContent(req);
      } catch (IOException e) {
        fail(e);
        throw e;
      }
      complete(req);
    } finally {
      buf = null;
      client.releaseWriter();
    }
  }

  /**
   * Fills {@code req} with the content to commit: inline, or the blocks no flush committed (none
   * in cache mode, where the worker completes the object).
   */
  private void completeContent(CompleteRequest.Builder req) throws IOException {
    if (object != null) {
      for (BlockExtent e : object.finish()) {
        req.addBlocks(block(e));
      }
      return;
    }
    if (blocks == null && base > 0) {
      // Appended to a file of blocks: what was written becomes a block, however small (inline
      // content cannot follow blocks).
      startBlocks();
    }
    if (blocks == null) {
      if (count > 0) {
        req.setInline(true).setInlineData(ByteString.copyFrom(buf, 0, count));
      }
      return;
    }
    blocks.endBlock();
    for (BlockExtent e : blocks.finished()) {
      req.addBlocks(block(e));
    }
  }

  private void stream(byte[] b, int off, int len) throws IOException {
    if (!canSync()) {
      if (object == null) {
        object = blockIO.openWriter(target);
        object.write(buf, 0, count);
        buf = null;
      }
      object.write(b, off, len);
      return;
    }
    if (blocks == null) {
      startBlocks();
    }
    blocks.write(b, off, len);
  }

  /** Moves the buffered content to block streams. */
  private void startBlocks() throws IOException {
    blocks = new BlockStreams(blockIO, target, base);
    blocks.write(buf, 0, count);
    buf = null;
  }

  /** Waits until no flush is in flight (the lock held). */
  private void awaitFlush() {
    boolean interrupted = false;
    while (flushing) {
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true; // the flush ends by its own deadline
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void checkWritable(String op) throws IOException {
    if (closed) {
      throw new IOException(op + " " + path() + ": stream is closed");
    }
    if (failure != null) {
      throw new IOException(op + " " + path() + ": an earlier write failed: "
          + failure.getMessage(), failure);
    }
  }

  /**
   * Gives the write up after {@code e}: cancels the streams to workers and removes the file if
   * nothing of it was ever visible.
   */
  private void fail(IOException e) {
    if (failure != null) {
      return;
    }
    failure = e;
    if (blocks != null) {
      blocks.abort();
    }
    if (object != null) {
      object.abort();
    }
    if (visible == 0 && !appended) {
      client.abandon(target);
      removed = true;
    }
  }

  private void complete(CompleteRequest.Builder req) throws IOException {
    CompleteRequest r = req
        .setHeader(client.header(MetaServiceGrpc.getCompleteMethod(), path().namespace()))
        .setPath(path().path()).setInodeId(target.inodeId()).build();
    client.batch(MetaServiceGrpc.getCompleteMethod(), Op.COMPLETE, path(),
        BatchCall.newBuilder().setComplete(r));
  }

  private static Block block(BlockExtent e) {
    return Block.newBuilder().setBlockId(e.blockId()).setOffset(e.offset())
        .setLength(e.length()).build();
  }

  private void buffer(byte[] b, int off, int len) {
    if (count + len > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(count + len, Math.min(2 * buf.length,
          target.inlineLimit())));
    }
    System.arraycopy(b, off, buf, count, len);
    count += len;
  }
}
