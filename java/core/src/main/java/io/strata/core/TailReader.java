package io.strata.core;

import io.strata.core.block.BlockReader;
import java.io.IOException;

/**
 * Reads a file being written that its writer flushed: its committed blocks through the data path,
 * then the bytes after them, up to the visible length at open, from the service ({@code
 * ReadTail}), which keeps them until a block holds them (the Go client's Reader.readTail).
 *
 * <p>A flush after the open may commit a block over bytes this reader took for the tail: the
 * service then answers nothing for them, and the reader asks for the file's blocks again (the
 * same inode; blocks never change) and reads them there. Safe for concurrent positioned reads.
 */
final class TailReader implements BlockReader {
  /**
   * The most a ReadTail call asks for: its answer is one message of the service's, which answers
   * at most 4 MiB.
   */
  static final int MAX_READ = 4 << 20;

  /**
   * The file's blocks as one Open gave them.
   *
   * @param blocks their reader, or null when there were none
   * @param tailStart where they end: the tail starts there
   */
  record View(BlockReader blocks, long tailStart) {}

  private final StrataClient client;
  private final FileInfo info;
  private volatile View view;

  /** Reads {@code info}'s file, whose blocks at open were {@code view}. */
  TailReader(StrataClient client, FileInfo info, View view) {
    this.client = client;
    this.info = info;
    this.view = view;
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    if (position >= info.length()) {
      return -1;
    }
    View v = view;
    if (position < v.tailStart()) {
      return fromBlocks(v, position, b, off, len);
    }
    int n = (int) Math.min(Math.min(len, MAX_READ), info.length() - position);
    byte[] got = client.readTail(info, position, n);
    if (got.length > 0) {
      int k = Math.min(n, got.length);
      System.arraycopy(got, 0, b, off, k);
      return k;
    }
    View again = refresh(v);
    if (position >= again.tailStart()) {
      throw new IOException("read " + info.path() + ": the file's flushed bytes at " + position
          + " are gone (it was cut meanwhile): open it again");
    }
    return fromBlocks(again, position, b, off, len);
  }

  private static int fromBlocks(View v, long position, byte[] b, int off, int len)
      throws IOException {
    return v.blocks().read(position, b, off, (int) Math.min(len, v.tailStart() - position));
  }

  /** The file's blocks now, asked for once by the reads that found {@code stale} outdated. */
  private synchronized View refresh(View stale) throws IOException {
    if (view == stale) {
      // NB: the old view's reader is dropped unclosed: a concurrent read may be using it, and
      // the workers' readers hold nothing per file.
      view = client.blocksOf(info);
    }
    return view;
  }

  @Override
  public void close() throws IOException {
    BlockReader blocks = view.blocks();
    if (blocks != null) {
      blocks.close();
    }
  }
}
