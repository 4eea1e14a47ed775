package io.strata.core;

import io.strata.core.block.BlockReader;
import java.io.Closeable;
import java.io.IOException;

/**
 * An open file, read by position. Small files carry their whole content from Open; larger ones
 * read through the {@link io.strata.core.block.BlockIO} (the workers). A read fills as much of
 * the request as the file holds, across blocks. Positioned reads are safe for concurrent use;
 * streams keep their own position (and buffer) on top.
 */
public final class FileReader implements Closeable {
  private final FileInfo info;
  private final byte[] inline;
  private final BlockReader blocks;
  private final long length;
  private volatile boolean closed;

  FileReader(FileInfo info, byte[] inline, BlockReader blocks) {
    this.info = info;
    this.inline = inline;
    this.blocks = blocks;
    // The inline content is the file: trust its size over the status (they agree).
    this.length = blocks == null ? inline.length : info.length();
  }

  /** The file's attributes at open. */
  public FileInfo info() {
    return info;
  }

  /** The file's length at open: reads end there. */
  public long length() {
    return length;
  }

  /**
   * Reads up to {@code len} bytes at {@code position} into {@code b} at {@code off}. Returns the
   * number of bytes read (at least 1 if {@code len > 0} and the position is inside the file), 0
   * if {@code len} is 0, or -1 at or past the end.
   */
  public int read(long position, byte[] b, int off, int len) throws IOException {
    if (closed) {
      throw new IOException("read " + info.path() + ": stream is closed");
    }
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (position < 0) {
      throw new java.io.EOFException("read " + info.path() + ": negative position " + position);
    }
    if (len == 0) {
      return 0;
    }
    if (position >= length) {
      return -1;
    }
    if (blocks != null) {
      return blocks.read(position, b, off, len);
    }
    int n = (int) Math.min(len, length - position);
    System.arraycopy(inline, (int) position, b, off, n);
    return n;
  }

  /**
   * Reports whether the whole content is in memory (a small file, stored inline): reads cost no
   * I/O, so callers need not buffer them.
   */
  public boolean inMemory() {
    return blocks == null;
  }

  /** Reports whether {@link #close} was called. */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    if (blocks != null) {
      blocks.close();
    }
  }
}
