package io.strata.hbase.wal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.exceptions.TimeoutIOException;
import org.apache.hadoop.hbase.io.ByteBufferWriter;
import org.apache.hadoop.hbase.io.asyncfs.AsyncFSOutput;
import org.apache.hadoop.hbase.io.asyncfs.AsyncFSOutputHelper;
import org.apache.hadoop.hbase.io.asyncfs.monitor.StreamSlowMonitor;
import org.apache.hadoop.hbase.regionserver.wal.AbstractProtobufLogWriter;
import org.apache.hadoop.hbase.shaded.protobuf.generated.WALProtos.WALHeader;
import org.apache.hadoop.hbase.shaded.protobuf.generated.WALProtos.WALTrailer;
import org.apache.hadoop.hbase.util.CommonFSUtils;
import org.apache.hadoop.hbase.util.CommonFSUtils.StreamLacksCapabilityException;
import org.apache.hadoop.hbase.wal.AbstractWALRoller;
import org.apache.hadoop.hbase.wal.AsyncFSWALProvider;
import org.apache.hadoop.hbase.wal.WAL.Entry;
import org.apache.hbase.thirdparty.io.netty.channel.Channel;
import org.apache.hbase.thirdparty.io.netty.channel.EventLoopGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writer of HBase's asynchronous write-ahead log ({@code asyncfs}, HBase's default provider)
 * that gives a log file on {@code strata://} a {@link StrataAsyncOutput}: the same protobuf log
 * format as HBase's {@code AsyncProtobufLogWriter}, written the same way, over an output whose
 * flushes do not queue up one behind the other. A log on any other file system gets the output
 * HBase would give it ({@code AsyncFSOutputHelper}: HDFS's fan-out output, or its wrapper).
 *
 * <p>Set {@code hbase.regionserver.wal.async.writer.impl} to this class (docs/java.md, "HBase").
 * HBase makes one per log file, through the constructor it looks up by reflection; its methods
 * are called as {@code AsyncProtobufLogWriter}'s are, by the log's consumer thread.
 */
public class StrataLogWriter extends AbstractProtobufLogWriter
    implements AsyncFSWALProvider.AsyncWriter {
  private static final Logger LOG = LoggerFactory.getLogger(StrataLogWriter.class);

  /** The scheme whose logs get a {@link StrataAsyncOutput}. */
  public static final String SCHEME = "strata";

  private final EventLoopGroup eventLoopGroup;
  private final Class<? extends Channel> channelClass;
  private volatile AsyncFSOutput output;
  /** The output's synced length once closed (-1 before). */
  private volatile long finalSyncedLength = -1;
  private OutputStream cellOut;
  /** How long the header and the trailer may take to flush (HBase's roll timeout). */
  private long waitMillis;

  /** The constructor HBase's AsyncFSWALProvider calls. */
  public StrataLogWriter(EventLoopGroup eventLoopGroup, Class<? extends Channel> channelClass) {
    this.eventLoopGroup = eventLoopGroup;
    this.channelClass = channelClass;
  }

  @Override
  protected void initOutput(FileSystem fs, Path path, boolean overwritable, int bufferSize,
      short replication, long blockSize, StreamSlowMonitor monitor, boolean noLocalWrite)
      throws IOException, StreamLacksCapabilityException {
    waitMillis = conf.getLong(AbstractWALRoller.WAL_ROLL_WAIT_TIMEOUT,
        AbstractWALRoller.DEFAULT_WAL_ROLL_WAIT_TIMEOUT);
    output = SCHEME.equals(fs.getScheme())
        ? strataOutput(fs, path, overwritable, bufferSize, replication, blockSize)
        : AsyncFSOutputHelper.createOutput(fs, path, overwritable, false, replication,
            blockSize, eventLoopGroup, channelClass, monitor, noLocalWrite);
    cellOut = new OutputAdapter(output);
  }

  /**
   * Creates the log file (its parent must exist, as HBase's helper has it) and checks, as HBase's
   * helper does unless told otherwise, that its stream has hflush and hsync. NB: Hadoop deprecates
   * the hflush name in favour of probing hsync, but HBase probes both, and so does this.
   */
  @SuppressWarnings("deprecation")
  private AsyncFSOutput strataOutput(FileSystem fs, Path path, boolean overwritable,
      int bufferSize, short replication, long blockSize)
      throws IOException, StreamLacksCapabilityException {
    FSDataOutputStream out =
        fs.createNonRecursive(path, overwritable, bufferSize, replication, blockSize, null);
    if (conf.getBoolean(CommonFSUtils.UNSAFE_STREAM_CAPABILITY_ENFORCE, true)) {
      for (String c : new String[] {StreamCapabilities.HFLUSH, StreamCapabilities.HSYNC}) {
        if (!out.hasCapability(c)) {
          out.close();
          throw new StreamLacksCapabilityException(c);
        }
      }
    }
    return new StrataAsyncOutput(path, out);
  }

  /** Encodes {@code entry} into the output's buffer (a flush sends it). */
  @Override
  public void append(Entry entry) {
    int before = output.buffered();
    try {
      entry.getKey().getBuilder(compressor).setFollowingKvCount(entry.getEdit().size()).build()
          .writeDelimitedTo(cellOut);
      for (Cell cell : entry.getEdit().getCells()) {
        cellEncoder.write(cell);
      }
    } catch (IOException e) {
      throw new AssertionError("writing to a memory buffer failed", e);
    }
    length.addAndGet(output.buffered() - before);
  }

  @Override
  public CompletableFuture<Long> sync(boolean forceSync) {
    return output.flush(forceSync);
  }

  /** Writes the trailer and closes the file; after a failure, closes what can be. */
  @Override
  public synchronized void close() throws IOException {
    AsyncFSOutput o = output;
    if (o == null) {
      return;
    }
    try {
      writeWALTrailer();
      o.close();
    } catch (Exception e) {
      LOG.warn("closing the log failed, closing it after a failure", e);
      o.recoverAndClose(null);
    }
    finalSyncedLength = o.getSyncedLength();
    output = null;
  }

  @Override
  protected void closeOutputIfNecessary() {
    AsyncFSOutput o = output;
    if (o != null) {
      try {
        o.recoverAndClose(null);
      } catch (IOException e) {
        LOG.warn("closing a log whose start failed (left to lease recovery)", e);
      }
    }
  }

  @Override
  protected long writeMagicAndWALHeader(byte[] magic, WALHeader header) throws IOException {
    output.write(magic);
    header.writeDelimitedTo(cellOut);
    return await(output.flush(false));
  }

  @Override
  protected long writeWALTrailerAndMagic(WALTrailer trailer, byte[] magic) throws IOException {
    trailer.writeTo(cellOut);
    output.writeInt(trailer.getSerializedSize());
    output.write(magic);
    return await(output.flush(false));
  }

  /** Waits for a flush of the header or the trailer, at most {@link #waitMillis}. */
  private long await(CompletableFuture<Long> f) throws IOException {
    try {
      return f.get(waitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw (IOException) new InterruptedIOException("waiting for the log's flush").initCause(e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
    } catch (TimeoutException e) {
      throw new TimeoutIOException("the log's flush took over " + waitMillis + " ms", e);
    }
  }

  @Override
  protected OutputStream getOutputStreamForCellEncoder() {
    return cellOut;
  }

  /** What the output acknowledged; once closed, what it had at its close. */
  @Override
  public long getSyncedLength() {
    AsyncFSOutput o = output;
    return o != null ? o.getSyncedLength() : finalSyncedLength;
  }

  /** The output as the cell encoder's stream (which may hand it ByteBuffers). */
  private static final class OutputAdapter extends OutputStream implements ByteBufferWriter {
    private final AsyncFSOutput out;
    private final byte[] one = new byte[1];

    OutputAdapter(AsyncFSOutput out) {
      this.out = out;
    }

    @Override
    public void write(int b) {
      one[0] = (byte) b;
      out.write(one);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      out.write(b, off, len);
    }

    @Override
    public void write(ByteBuffer b, int off, int len) {
      ByteBuffer bb = b.duplicate();
      bb.position(off);
      bb.limit(off + len);
      out.write(bb);
    }

    @Override
    public void writeInt(int i) {
      out.writeInt(i);
    }
  }
}
