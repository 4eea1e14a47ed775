package io.strata.hbase.wal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.io.ByteArrayOutputStream;
import org.apache.hadoop.hbase.io.asyncfs.AsyncFSOutput;
import org.apache.hadoop.hbase.util.CancelableProgressable;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;

/**
 * HBase's asynchronous log output ({@code AsyncFSOutput}) over a Strata file's stream, in place of
 * the {@code WrapperAsyncFSOutput} HBase gives every file system but HDFS. The wrapper runs the
 * log's flushes one after the other on a thread of its own, each with the bytes buffered since
 * the one before, so that under load a queue of flushes forms, each a round trip to the
 * namespace service. Here one flush is in flight at a time and the next carries everything
 * requested while it was: the bytes of every flush queued meanwhile, in one write and one
 * {@code hflush} (or {@code hsync}, if any of them asked for it), which completes them all. HDFS's
 * output gets the same from its pipeline, whose acks answer many packets at once.
 *
 * <p>Each flush's future completes, in the order the flushes were asked for, with the file's
 * length through that flush's bytes, once the service has them: what HBase counts as the log's
 * synced length.
 *
 * <p>Threads: as the interface allows, writes, flushes and close come from one thread
 * (AsyncFSWAL's consumer); a flusher thread of this output's own writes the stream, flushes it
 * and completes the futures, so that the caller never waits for the service.
 *
 * <p>A failed write or flush breaks the output: the flushes it carried, those queued behind it
 * and every later one fail with its exception, and {@link #isBroken} says so (HBase then rolls
 * its log to a new file and writes the unacknowledged edits again there). The file keeps what was
 * flushed before; its Strata writer gives up and leaves it to lease recovery.
 */
public final class StrataAsyncOutput implements AsyncFSOutput {
  /** A flush asked for: its bytes, whether it asked for an hsync, and its future. */
  private record Request(ByteArrayOutputStream data, boolean sync, CompletableFuture<Long> done) {}

  private final FSDataOutputStream out;
  private final ExecutorService flusher;
  /** What was written since the last flush was asked for; the caller's thread's alone. */
  private ByteArrayOutputStream buffer = new ByteArrayOutputStream();
  private volatile long syncedLength;
  /** The exception that broke the output, once one did. */
  private volatile IOException broken;

  private final Object mu = new Object();
  /** Flushes asked for and not yet sent, in order (guarded by mu). */
  private final List<Request> queued = new ArrayList<>();
  /** The flusher is sending or about to (guarded by mu). */
  private boolean flushing;

  /** An output over {@code out}, a new Strata file's stream; its flusher is named for {@code file}. */
  public StrataAsyncOutput(Path file, FSDataOutputStream out) {
    this.out = out;
    this.flusher = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "strata-wal-flusher-" + file.getName());
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public void write(byte[] b) {
    write(b, 0, b.length);
  }

  @Override
  public void write(byte[] b, int off, int len) {
    buffer.write(b, off, len);
  }

  @Override
  public void writeInt(int i) {
    buffer.writeInt(i);
  }

  /** Copies {@code bb}'s remaining bytes; its position stays (as HBase's wrapper does). */
  @Override
  public void write(ByteBuffer bb) {
    buffer.write(bb, bb.position(), bb.remaining());
  }

  @Override
  public int buffered() {
    return buffer.size();
  }

  @Override
  public boolean isBroken() {
    return broken != null;
  }

  /** None: the bytes go to the namespace service's replicated log, not to a pipeline. */
  @Override
  public DatanodeInfo[] getPipeline() {
    return new DatanodeInfo[0];
  }

  @Override
  public CompletableFuture<Long> flush(boolean sync) {
    Request r = new Request(buffer, sync, new CompletableFuture<>());
    buffer = new ByteArrayOutputStream();
    boolean start;
    synchronized (mu) {
      IOException e = broken;
      if (e != null) {
        r.done().completeExceptionally(e);
        return r.done();
      }
      queued.add(r);
      start = !flushing;
      flushing = true;
    }
    if (start) {
      flusher.execute(this::drain);
    }
    return r.done();
  }

  /** The flusher: sends what is queued, then what queued meanwhile, until nothing is. */
  private void drain() {
    for (;;) {
      List<Request> batch;
      synchronized (mu) {
        if (queued.isEmpty()) {
          flushing = false;
          mu.notifyAll();
          return;
        }
        batch = new ArrayList<>(queued);
        queued.clear();
      }
      send(batch);
    }
  }

  /** Writes and flushes {@code batch}'s bytes at once, and completes (or fails) its futures. */
  private void send(List<Request> batch) {
    long[] ends = new long[batch.size()];
    try {
      boolean hsync = false;
      long pos = out.getPos();
      for (int i = 0; i < batch.size(); i++) {
        Request r = batch.get(i);
        out.write(r.data().getBuffer(), 0, r.data().size());
        pos += r.data().size();
        ends[i] = pos;
        hsync |= r.sync();
      }
      if (hsync) {
        out.hsync();
      } else {
        out.hflush();
      }
      syncedLength = pos;
    } catch (IOException | RuntimeException e) {
      fail(batch, e instanceof IOException io ? io : new IOException(e.getMessage(), e));
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).done().complete(ends[i]);
    }
  }

  /** Breaks the output with {@code e}: fails {@code batch} and everything queued behind it. */
  private void fail(List<Request> batch, IOException e) {
    List<Request> rest;
    synchronized (mu) {
      if (broken == null) {
        broken = e;
      }
      rest = new ArrayList<>(queued);
      queued.clear();
    }
    for (Request r : batch) {
      r.done().completeExceptionally(e);
    }
    for (Request r : rest) {
      r.done().completeExceptionally(e);
    }
  }

  /**
   * Closes the file with everything flushed (HBase flushes its trailer first): waits for the
   * flush in flight, then commits the file.
   *
   * @throws IllegalStateException if bytes were written since the last flush
   */
  @Override
  public void close() throws IOException {
    if (buffer.size() > 0) {
      throw new IllegalStateException("close: " + buffer.size()
          + " bytes were written since the last flush: flush them first");
    }
    closeStream();
    syncedLength = out.getPos(); // the close committed all the stream was given
  }

  /**
   * Closes after a failure: the flushes not yet sent fail, the one in flight ends (by the
   * client's deadline at most), and the stream is closed; if that fails too, the file is left to
   * lease recovery, which closes it with what was flushed. The synced length stays what the
   * flushes acknowledged.
   */
  @Override
  public void recoverAndClose(CancelableProgressable reporter) throws IOException {
    fail(List.of(), new IOException("the log's output was closed after a failure"));
    closeStream();
  }

  private void closeStream() throws IOException {
    try {
      awaitFlushed();
    } finally {
      flusher.shutdown();
    }
    out.close();
  }

  /** Waits until the flusher is idle. */
  private void awaitFlushed() throws InterruptedIOException {
    synchronized (mu) {
      while (flushing) {
        try {
          mu.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("close: interrupted while a flush was in flight");
        }
      }
    }
  }

  @Override
  public long getSyncedLength() {
    return syncedLength;
  }
}
