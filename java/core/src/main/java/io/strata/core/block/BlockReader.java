package io.strata.core.block;

import java.io.Closeable;
import java.io.IOException;

/**
 * Reads one file's content out of its blocks. Safe for concurrent positioned reads: callers
 * (input streams, positioned reads) share one reader per open file.
 */
public interface BlockReader extends Closeable {
  /**
   * Reads up to {@code len} bytes at {@code position} into {@code b} from {@code off}. Returns
   * the number read, at least 1 when {@code len > 0} and {@code position} is before the end of
   * the file, or -1 at or past the end.
   */
  int read(long position, byte[] b, int off, int len) throws IOException;

  /**
   * Reads as {@link #read} does, for a reader that reads here and there (columnar formats,
   * positioned reads): the workers fetch only the pages asked for, and nothing ahead. By
   * default, {@link #read}.
   */
  default int readRandom(long position, byte[] b, int off, int len) throws IOException {
    return read(position, b, off, len);
  }
}
