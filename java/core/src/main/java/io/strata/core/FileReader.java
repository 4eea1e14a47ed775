package io.strata.core;

import io.strata.core.block.BlockReader;
import io.strata.core.error.ObjectChangedException;
import java.io.Closeable;
import java.io.IOException;

/**
 * An open file, read by position. Small files carry their whole content from Open; larger ones
 * read through the {@link io.strata.core.block.BlockIO} (the workers). A read fills as much of
 * the request as the file holds, across blocks. Positioned reads are safe for concurrent use;
 * streams keep their own position (and buffer) on top.
 *
 * <p>In a cache-mode namespace a file is a version of an object, and a worker reads only that
 * version. If the object changed in the bucket since the namespace last checked it (by its sync
 * interval) the read fails with {@link ObjectChangedException}; a reader that has returned no
 * byte yet then opens the file again, checked against the bucket, and reads the new version, as
 * the Go client does. Once it has returned bytes it never does (it would mix two versions): the
 * exception reaches the caller, who opens the file again.
 */
public final class FileReader implements Closeable {
  /** Opens the file again, checked against the bucket first (OpenRequest.refresh). */
  @FunctionalInterface
  interface Reopener {
    Content reopen() throws IOException;
  }

  /**
   * What one Open gave.
   *
   * @param info the file's attributes
   * @param inline the whole content of a small file, or null
   * @param blocks the reader of its blocks, or null for a small file
   * @param object whether the blocks are ranges of one version of an object (cache mode)
   */
  record Content(FileInfo info, byte[] inline, BlockReader blocks, boolean object) {
    /** The inline content is the file: its size is trusted over the status (they agree). */
    long length() {
      return blocks == null ? inline.length : info.length();
    }
  }

  private final Reopener reopener;
  private volatile Content content;
  /** A read returned bytes of {@link #content}: it is never replaced after that. */
  private volatile boolean started;
  private volatile boolean closed;

  FileReader(Content content, Reopener reopener) {
    this.content = content;
    this.reopener = reopener;
  }

  /** The file's attributes at open (at the last open, if it was opened again). */
  public FileInfo info() {
    return content.info();
  }

  /** The file's length at open: reads end there. */
  public long length() {
    return content.length();
  }

  /**
   * Reads up to {@code len} bytes at {@code position} into {@code b} at {@code off}. Returns the
   * number of bytes read (at least 1 if {@code len > 0} and the position is inside the file), 0
   * if {@code len} is 0, or -1 at or past the end.
   */
  public int read(long position, byte[] b, int off, int len) throws IOException {
    return read(position, b, off, len, false);
  }

  /**
   * Reads as {@link #read(long, byte[], int, int)} does; {@code random} says the caller reads
   * here and there (columnar formats, positioned reads), so that the workers fetch only what it
   * asks for and nothing ahead.
   */
  public int read(long position, byte[] b, int off, int len, boolean random) throws IOException {
    if (closed) {
      throw new IOException("read " + info().path() + ": stream is closed");
    }
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (position < 0) {
      throw new java.io.EOFException("read " + info().path() + ": negative position "
          + position);
    }
    if (len == 0) {
      return 0;
    }
    boolean reopened = false;
    while (true) {
      Content c = content;
      if (position >= c.length()) {
        return -1;
      }
      int n;
      try {
        n = readFrom(c, position, b, off, len, random);
      } catch (ObjectChangedException e) {
        if (reopened || !reopen(c)) {
          throw e;
        }
        reopened = true;
        continue;
      }
      if (started ? content == c : start(c)) {
        return n;
      }
      // Opened again meanwhile by another read: these bytes are of the old version.
    }
  }

  private static int readFrom(Content c, long position, byte[] b, int off, int len,
      boolean random) throws IOException {
    if (c.blocks() != null) {
      return random ? c.blocks().readRandom(position, b, off, len)
          : c.blocks().read(position, b, off, len);
    }
    int n = (int) Math.min(len, c.length() - position);
    System.arraycopy(c.inline(), (int) position, b, off, n);
    return n;
  }

  /** Records that a read of {@code c} returns bytes; false if {@code c} was replaced. */
  private synchronized boolean start(Content c) {
    if (content != c) {
      return false;
    }
    started = true;
    return true;
  }

  /**
   * Opens the file again after a read of {@code failed} met a changed object, if no read has
   * returned bytes yet. Returns whether there is other content to read now.
   */
  private synchronized boolean reopen(Content failed) throws IOException {
    if (content != failed) {
      return true; // another read opened it again
    }
    if (started || closed || !failed.object()) {
      return false;
    }
    content = reopener.reopen();
    if (failed.blocks() != null) {
      failed.blocks().close();
    }
    return true;
  }

  /**
   * Reports whether the whole content is in memory (a small file, stored inline): reads cost no
   * I/O, so callers need not buffer them.
   */
  public boolean inMemory() {
    return content.blocks() == null;
  }

  /** Reports whether {@link #close} was called. */
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() throws IOException {
    BlockReader blocks;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      blocks = content.blocks();
    }
    if (blocks != null) {
      blocks.close();
    }
  }
}
