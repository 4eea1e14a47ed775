package io.strata.hadoop;

import io.strata.core.FileReader;
import java.io.EOFException;
import java.io.IOException;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * A Strata file open for reading: a position over the core's positioned reads. Seeks past the end
 * are rejected, as in HDFS. Positioned reads do not move the position and are safe for
 * concurrent use; the sequential methods are synchronized. Counts the bytes it returns into the
 * FileSystem statistics.
 */
final class StrataInputStream extends FSInputStream implements StreamCapabilities {
  private final FileReader reader;
  private final FileSystem.Statistics stats;
  private final byte[] one = new byte[1];
  private long pos;

  StrataInputStream(FileReader reader, FileSystem.Statistics stats) {
    this.reader = reader;
    this.stats = stats;
  }

  @Override
  public synchronized void seek(long target) throws IOException {
    checkOpen();
    if (target < 0) {
      throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + ": " + target);
    }
    if (target > reader.length()) {
      throw new EOFException(FSExceptionMessages.CANNOT_SEEK_PAST_EOF + ": " + target
          + " > " + reader.length() + " in " + reader.info().path());
    }
    pos = target;
  }

  @Override
  public synchronized long getPos() throws IOException {
    return pos;
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public synchronized int read() throws IOException {
    int n = read(one, 0, 1);
    return n <= 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    int n = reader.read(pos, b, off, len);
    if (n > 0) {
      pos += n;
      count(n);
    }
    return n;
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    checkOpen();
    validatePositionedReadArgs(position, b, off, len);
    int n = reader.read(position, b, off, len);
    if (n > 0) {
      count(n);
    }
    return n;
  }

  @Override
  public synchronized long skip(long n) throws IOException {
    checkOpen();
    if (n <= 0) {
      return 0;
    }
    long skipped = Math.min(n, reader.length() - pos);
    pos += skipped;
    return skipped;
  }

  @Override
  public synchronized int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, Math.max(0, reader.length() - pos));
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }

  /** No stream capability is offered (no unbuffer, no ByteBuffer reads, no readahead). */
  @Override
  public boolean hasCapability(String capability) {
    return false;
  }

  private void count(int n) {
    if (stats != null) {
      stats.incrementBytesRead(n);
    }
  }

  private void checkOpen() throws IOException {
    if (reader.isClosed()) {
      throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + ": " + reader.info().path());
    }
  }
}
