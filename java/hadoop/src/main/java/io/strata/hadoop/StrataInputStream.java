package io.strata.hadoop;

import io.strata.core.FileReader;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.CanUnbuffer;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;

/**
 * A Strata file open for reading: a position over the core's positioned reads. Sequential reads
 * go through a buffer of {@code fs.strata.read.buffer} bytes (4 MiB by default), filled with one
 * read at the position, so that small reads do not each cost a request to a worker; a read at
 * least as large as the buffer, or of {@link #DIRECT_READ} (1 MiB) or more, bypasses it. Seeks
 * inside the buffer keep it. Positioned reads (PositionedReadable, readFully, and readVectored,
 * which runs them in parallel: {@link VectoredReads}) bypass the buffer, do not move the position
 * and are safe for concurrent use; the sequential methods are
 * synchronized. {@link #unbuffer} drops the buffer. Seeks past the end are rejected, as in HDFS.
 * Counts the bytes it returns into the FileSystem statistics.
 *
 * <p>Random access, as S3A's adaptive input policy: a stream opened with a random-access read
 * policy ({@code openFile}'s {@code fs.option.openfile.read.policy}: random, columnar, vector,
 * parquet, orc), or that seeks backwards out of its buffer or makes a positioned read (columnar
 * formats read a footer, then column chunks), reads from then on with a small buffer ({@link
 * #RANDOM_BUFFER}) and has the workers fetch only what it asks for, nothing ahead: a query
 * reading a few columns of a cold file does not pull the rest from the bucket.
 */
final class StrataInputStream extends FSInputStream implements StreamCapabilities, CanUnbuffer {
  /**
   * Sequential reads this large go straight into the caller's array, bypassing the buffer: a
   * short-circuit read fills it by the block's lease in one pass (read, CRC, copy), and the
   * buffer would only copy the bytes once more. Smaller reads are gathered by the buffer.
   */
  static final int DIRECT_READ = 1 << 20;

  /** The buffer of a stream in random access. */
  static final int RANDOM_BUFFER = 64 << 10;

  private final FileReader reader;
  private final FileSystem.Statistics stats;
  private int bufferSize;
  private volatile boolean random;
  private final byte[] one = new byte[1];
  private long pos;
  private byte[] buf;
  private long bufStart;
  private int bufLen;

  StrataInputStream(FileReader reader, FileSystem.Statistics stats, int bufferSize,
      boolean random) {
    this.reader = reader;
    this.stats = stats;
    // A small file's content is in memory already: buffering would only copy it.
    this.bufferSize = reader.inMemory() ? 0 : bufferSize;
    if (random) {
      goRandom();
    }
  }

  /** From now on, reads here and there: a small buffer, nothing fetched ahead. */
  private void goRandom() {
    random = true;
    bufferSize = Math.min(bufferSize, RANDOM_BUFFER);
  }

  /** Whether the stream reads in random access (for tests). */
  boolean isRandom() {
    return random;
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
    if (!random && target < pos && (buf == null || target < bufStart)) {
      goRandom(); // a backward seek out of the buffer: columnar access, as S3A's adaptive policy
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

  /** Reads as much of {@code len} as the file holds from the position. */
  @Override
  public synchronized int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (len == 0) {
      return 0;
    }
    if (pos >= reader.length()) {
      return -1;
    }
    int done = 0;
    while (done < len && pos < reader.length()) {
      int n;
      if (buf != null && pos >= bufStart && pos < bufStart + bufLen) {
        n = (int) Math.min(len - done, bufStart + bufLen - pos);
        System.arraycopy(buf, (int) (pos - bufStart), b, off + done, n);
      } else if (len - done >= Math.min(bufferSize, DIRECT_READ)) {
        n = reader.read(pos, b, off + done, len - done, random);
      } else {
        fill();
        continue;
      }
      if (n <= 0) {
        break;
      }
      pos += n;
      done += n;
    }
    count(done);
    return done == 0 ? -1 : done;
  }

  /** Fills the buffer from the position (called only before the end of the file). */
  private void fill() throws IOException {
    int want = (int) Math.min(bufferSize, reader.length() - pos);
    if (buf == null || buf.length < want) {
      buf = new byte[(int) Math.min(bufferSize, reader.length())];
    }
    bufLen = 0;
    bufStart = pos;
    while (bufLen < want) {
      int n = reader.read(pos + bufLen, buf, bufLen, want - bufLen, random);
      if (n <= 0) {
        throw new EOFException("read " + reader.info().path() + ": the file ended at "
            + (pos + bufLen) + ", before its length " + reader.length());
      }
      bufLen += n;
    }
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    checkOpen();
    validatePositionedReadArgs(position, b, off, len);
    if (!random) {
      synchronized (this) {
        goRandom();
      }
    }
    int n = reader.read(position, b, off, len, true);
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

  /** Drops the read buffer; the position stays. Allowed on a closed stream. */
  @Override
  public synchronized void unbuffer() {
    buf = null;
    bufLen = 0;
  }

  @Override
  public synchronized void close() throws IOException {
    unbuffer();
    reader.close();
  }

  /** Unbuffer is the one stream capability offered (no ByteBuffer reads, no readahead). */
  @Override
  public boolean hasCapability(String capability) {
    return StreamCapabilities.UNBUFFER.equalsIgnoreCase(capability)
        || StreamCapabilities.VECTOREDIO.equalsIgnoreCase(capability);
  }

  /** Reads the ranges in parallel, each a positioned read (see {@link VectoredReads}). */
  @Override
  public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate)
      throws IOException {
    checkOpen();
    VectoredReads.read(this, ranges, allocate);
  }

  private void count(int n) {
    if (stats != null && n > 0) {
      stats.incrementBytesRead(n);
    }
  }

  private void checkOpen() throws IOException {
    if (reader.isClosed()) {
      throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + ": " + reader.info().path());
    }
  }
}
