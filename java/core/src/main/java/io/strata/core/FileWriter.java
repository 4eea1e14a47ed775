package io.strata.core;

import io.strata.core.block.BlockExtent;
import io.strata.core.block.BlockIO;
import io.strata.core.block.BlockWriter;
import io.strata.core.block.WriteTarget;
import io.strata.core.error.Op;
import io.strata.proto.v1.BatchCall;
import io.strata.proto.v1.Block;
import io.strata.proto.v1.CompleteRequest;
import io.strata.proto.v1.MetaServiceGrpc;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A file being written. It exists, empty, from create on; its content becomes visible, whole,
 * when {@link #close} commits it (Complete). Content up to the inline limit is buffered and
 * committed inline; past the limit it streams to the {@link BlockIO} (a worker). The client's
 * lease on the file is renewed until close.
 *
 * <p>When the data path fails (in a write, or in close while the worker finishes the blocks),
 * the writer gives up at once: the stream to the worker is cancelled and the file is removed,
 * only if its path still names the inode this writer created (a conditional delete), so that a
 * partial file is never visible and a newer file of the same name is never touched. Further
 * writes fail, and close (which releases the lease) reports the failure again, so that a caller
 * that ignored it still learns of it.
 *
 * <p>Methods are synchronized: one writer per file, but close may come from another thread.
 */
public final class FileWriter extends OutputStream {
  private final StrataClient client;
  private final WriteTarget target;
  private final BlockIO blockIO;
  private final byte[] one = new byte[1];
  private byte[] buf = new byte[256];
  private int count;
  private long length;
  private BlockWriter blocks;
  private IOException failure;
  private boolean closed;

  FileWriter(StrataClient client, WriteTarget target, BlockIO blockIO) {
    this.client = client;
    this.target = target;
    this.blockIO = blockIO;
  }

  /** The file being written. */
  public StrataPath path() {
    return target.path();
  }

  /** Bytes written so far. */
  public synchronized long length() {
    return length;
  }

  @Override
  public synchronized void write(int b) throws IOException {
    one[0] = (byte) b;
    write(one, 0, 1);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    if (closed) {
      throw new IOException("write " + path() + ": stream is closed");
    }
    if (failure != null) {
      throw new IOException("write " + path() + ": an earlier write failed: "
          + failure.getMessage(), failure);
    }
    try {
      if (blocks == null && (long) count + len <= target.inlineLimit()) {
        append(b, off, len);
      } else {
        if (blocks == null) {
          blocks = blockIO.openWriter(target);
          blocks.write(buf, 0, count);
          buf = null;
        }
        blocks.write(b, off, len);
      }
    } catch (IOException e) {
      fail(e);
      throw e;
    }
    length += len;
  }

  /** Content becomes visible at close only; flush has nothing to do. */
  @Override
  public void flush() throws IOException {
    if (closed) {
      throw new IOException("flush " + path() + ": stream is closed");
    }
  }

  /** Commits the content and releases the lease. Idempotent. */
  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (failure != null) {
        throw new IOException("close " + path() + ": the write failed and the file was "
            + "removed: " + failure.getMessage(), failure);
      }
      CompleteRequest.Builder req = CompleteRequest.newBuilder().setLength(length);
      if (blocks != null) {
        for (BlockExtent e : finishBlocks()) {
          req.addBlocks(Block.newBuilder().setBlockId(e.blockId()).setOffset(e.offset())
              .setLength(e.length()));
        }
      } else if (count > 0) {
        req.setInline(true).setInlineData(com.google.protobuf.ByteString.copyFrom(buf, 0, count));
      }
      complete(req);
    } finally {
      buf = null;
      client.releaseWriter();
    }
  }

  private List<BlockExtent> finishBlocks() throws IOException {
    try {
      return blocks.finish();
    } catch (IOException e) {
      fail(e);
      throw e;
    }
  }

  /** Gives the write up after {@code e}: cancels the block stream and removes the file. */
  private void fail(IOException e) {
    failure = e;
    if (blocks != null) {
      blocks.abort();
    }
    client.abandon(target);
  }

  private void complete(CompleteRequest.Builder req) throws IOException {
    CompleteRequest r = req
        .setHeader(client.header(MetaServiceGrpc.getCompleteMethod(), path().namespace()))
        .setPath(path().path()).setInodeId(target.inodeId()).build();
    client.batch(MetaServiceGrpc.getCompleteMethod(), Op.COMPLETE, path(),
        BatchCall.newBuilder().setComplete(r));
  }

  private void append(byte[] b, int off, int len) {
    if (count + len > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(count + len, Math.min(2 * buf.length,
          target.inlineLimit())));
    }
    System.arraycopy(b, off, buf, count, len);
    count += len;
  }
}
