package io.strata.core;

import java.io.Closeable;
import java.io.IOException;

/**
 * A file open for writing as a caller sees it, whether its create was sent at once ({@link
 * FileWriter}) or waits for the first need of it ({@link DeferredWriter}).
 */
public interface FileOutput extends Closeable {
  /** The file being written. */
  StrataPath path();

  /** The file's length as written so far. */
  long length();

  /** Writes {@code b}'s low byte. */
  void write(int b) throws IOException;

  /** Writes {@code len} bytes of {@code b} from {@code off}. */
  void write(byte[] b, int off, int len) throws IOException;

  /** Has nothing to do but fail on a closed stream ({@link FileWriter#flush}). */
  void flush() throws IOException;

  /** Makes what was written visible and durable ({@link FileWriter#hflush}). */
  void hflush() throws IOException;

  /** As {@link #hflush} ({@link FileWriter#hsync}). */
  void hsync() throws IOException;

  /** Whether {@link #hflush} and {@link #hsync} are supported (block mode). */
  boolean canSync();

  /** Commits the content; idempotent. */
  @Override
  void close() throws IOException;
}
