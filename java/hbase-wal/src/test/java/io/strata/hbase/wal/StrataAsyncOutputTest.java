package io.strata.hbase.wal;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.Syncable;
import org.junit.After;
import org.junit.Test;

/**
 * {@link StrataAsyncOutput} over a stream whose syncs the test holds until it lets each go: one
 * flush in flight at a time, the flushes asked for meanwhile sent together when it returns (an
 * hsync if any asked for one), futures completed in order with their own lengths, and a failure
 * failing everything after it.
 */
public class StrataAsyncOutputTest {
  /** A stream whose hflush and hsync each wait until the test lets them go, or fail them. */
  static final class GatedStream extends OutputStream implements Syncable {
    /** A sync the stream was asked for: which, and the bytes written before it. */
    record Sync(boolean hsync, String content) {}

    final ByteArrayOutputStream written = new ByteArrayOutputStream();
    final BlockingQueue<Sync> syncs = new LinkedBlockingQueue<>();
    /** One answer per sync: null lets it return, an exception fails it. */
    final BlockingQueue<Optional<IOException>> answers = new LinkedBlockingQueue<>();
    volatile boolean closed;

    @Override
    public synchronized void write(int b) {
      written.write(b);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
      written.write(b, off, len);
    }

    @Override
    public void hflush() throws IOException {
      sync(false);
    }

    @Override
    public void hsync() throws IOException {
      sync(true);
    }

    private void sync(boolean hsync) throws IOException {
      String content;
      synchronized (this) {
        content = written.toString(StandardCharsets.UTF_8);
      }
      syncs.add(new Sync(hsync, content));
      Optional<IOException> a;
      try {
        a = answers.take();
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
      if (a.isPresent()) {
        throw a.get();
      }
    }

    @Override
    public void close() {
      closed = true;
    }

    /** The next sync the output made (waits for it). */
    Sync next() throws InterruptedException {
      Sync s = syncs.poll(30, TimeUnit.SECONDS);
      if (s == null) {
        throw new AssertionError("no sync within 30 s");
      }
      return s;
    }

    void release() {
      answers.add(Optional.empty());
    }

    void fail(IOException e) {
      answers.add(Optional.of(e));
    }
  }

  private final GatedStream stream = new GatedStream();
  private final StrataAsyncOutput out;

  public StrataAsyncOutputTest() throws IOException {
    out = new StrataAsyncOutput(new Path("/wal/test"), new FSDataOutputStream(stream, null));
  }

  @After
  public void releaseAll() {
    for (int i = 0; i < 16; i++) {
      stream.release(); // any sync still waiting
    }
  }

  private CompletableFuture<Long> writeAndFlush(String s, boolean hsync) {
    out.write(s.getBytes(StandardCharsets.UTF_8));
    return out.flush(hsync);
  }

  private static long get(CompletableFuture<Long> f) throws Exception {
    return f.get(30, TimeUnit.SECONDS);
  }

  @Test
  public void flushesAskedForMeanwhileLeaveTogetherWhenTheOneInFlightReturns() throws Exception {
    CompletableFuture<Long> a = writeAndFlush("a", false);
    assertEquals(new GatedStream.Sync(false, "a"), stream.next());
    CompletableFuture<Long> b = writeAndFlush("bb", false);
    CompletableFuture<Long> c = writeAndFlush("ccc", true);
    CompletableFuture<Long> d = writeAndFlush("dddd", false);
    assertEquals(0, out.buffered()); // each flush took its bytes
    assertFalse(a.isDone());
    stream.release();
    assertEquals(1, get(a));
    // One sync for the three queued, an hsync since one of them asked for it.
    assertEquals(new GatedStream.Sync(true, "abbcccdddd"), stream.next());
    assertFalse(b.isDone() || c.isDone() || d.isDone());
    stream.release();
    assertEquals(3, get(b));
    assertEquals(6, get(c));
    assertEquals(10, get(d));
    assertEquals(10, out.getSyncedLength());
    assertTrue("no sync beyond the two", stream.syncs.isEmpty());
  }

  @Test
  public void futuresCompleteInTheOrderTheFlushesWereAskedFor() throws Exception {
    CompletableFuture<Long> a = writeAndFlush("a", false);
    stream.next();
    // A flush with nothing new must not complete before the one in flight: HBase would take
    // the edits in flight for synced.
    CompletableFuture<Long> empty = out.flush(false);
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    a.thenRun(() -> order.add("a"));
    // NB: get() on a future may return before its dependents ran: wait for the dependent.
    CompletableFuture<Void> emptyRan = empty.thenRun(() -> order.add("empty"));
    assertFalse(empty.isDone());
    stream.release();
    assertEquals(new GatedStream.Sync(false, "a"), stream.next());
    stream.release();
    assertEquals(1, get(empty));
    emptyRan.get(30, TimeUnit.SECONDS);
    assertEquals(List.of("a", "empty"), order);
  }

  @Test
  public void aFailedFlushFailsWhatQueuedBehindItAndEveryLaterOne() throws Exception {
    CompletableFuture<Long> a = writeAndFlush("a", false);
    stream.next();
    CompletableFuture<Long> b = writeAndFlush("b", false);
    IOException boom = new IOException("the service refused the flush");
    stream.fail(boom);
    assertSame(boom, cause(a));
    assertSame(boom, cause(b));
    assertTrue(out.isBroken());
    assertSame(boom, cause(writeAndFlush("c", false)));
    out.recoverAndClose(null);
    assertTrue(stream.closed);
    assertEquals(0, out.getSyncedLength()); // what was acknowledged: nothing
  }

  @Test
  public void closeWaitsForTheFlushInFlightThenClosesTheStream() throws Exception {
    CompletableFuture<Long> a = writeAndFlush("abc", false);
    stream.next();
    CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    assertFalse(stream.closed);
    stream.release();
    closed.get(30, TimeUnit.SECONDS);
    assertEquals(3, get(a));
    assertTrue(stream.closed);
    assertEquals(3, out.getSyncedLength());
  }

  @Test
  public void closeRefusesBytesNeverFlushed() {
    out.write(new byte[] {1, 2});
    assertThrows(IllegalStateException.class, out::close);
    assertFalse(stream.closed);
  }

  @Test
  public void writesOfEveryKindReachTheStreamInOrder() throws Exception {
    out.write(new byte[] {'x', 'a', 'b', 'y'}, 1, 2);
    out.writeInt(0x41424344);
    ByteBuffer bb = ByteBuffer.wrap("zefz".getBytes(StandardCharsets.UTF_8));
    bb.position(1).limit(3);
    out.write(bb);
    assertEquals(1, bb.position()); // copied, not consumed
    assertEquals(8, out.buffered());
    CompletableFuture<Long> f = out.flush(false);
    assertEquals(new GatedStream.Sync(false, "abABCDef"), stream.next());
    stream.release();
    assertEquals(8, get(f));
  }

  private static Throwable cause(CompletableFuture<Long> f) throws Exception {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> f.get(30, TimeUnit.SECONDS));
    return e.getCause();
  }
}
