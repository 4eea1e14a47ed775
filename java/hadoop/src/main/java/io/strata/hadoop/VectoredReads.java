package io.strata.hadoop;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.PositionedReadable;

/**
 * Hadoop's vectored read ({@code readVectored}) of a Strata stream: the ranges are read in
 * parallel, each a positioned read. A columnar reader (Parquet, from 1.14 on by default) asks
 * for all the column chunks of a row group at once; Hadoop's default reads them one after
 * another, so that a cold read waits for the worker's fetch of each chunk in turn, where S3A
 * fetches them together (issue 42). Ranges are not merged: each is fetched exactly, and the
 * worker fetches the parts of a block missing in one go.
 *
 * <p>The reads run on a pool shared by the JVM's streams ({@link #THREADS} daemon threads);
 * a range's future completes with its bytes (the buffer {@code allocate} gave, positioned at 0,
 * its limit the range's length) or fails with the read's error (an {@code EOFException} past
 * the end of the file).
 */
final class VectoredReads {
  /** Threads of the shared pool: the ranges read at once, over all streams. */
  static final int THREADS = 8;

  private static final ExecutorService POOL = pool();

  private VectoredReads() {}

  private static ExecutorService pool() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor p = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, "strata-vectored-read-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    p.allowCoreThreadTimeOut(true);
    return p;
  }

  /**
   * Starts reading each range of {@code ranges} from {@code in} into a buffer of {@code
   * allocate}, and sets each range's future. As Hadoop's own: a range with a negative offset
   * is an EOFException, one with a negative length, or ranges that overlap, an
   * IllegalArgumentException, before anything is read.
   */
  static void read(PositionedReadable in, List<? extends FileRange> ranges,
      IntFunction<ByteBuffer> allocate) throws EOFException {
    check(ranges);
    for (FileRange r : ranges) {
      CompletableFuture<ByteBuffer> f = new CompletableFuture<>();
      r.setData(f);
      POOL.execute(() -> {
        try {
          f.complete(readRange(in, r, allocate));
        } catch (IOException | RuntimeException e) {
          f.completeExceptionally(e);
        }
      });
    }
  }

  private static void check(List<? extends FileRange> ranges) throws EOFException {
    List<FileRange> sorted = new ArrayList<>(ranges);
    sorted.sort(Comparator.comparingLong(FileRange::getOffset));
    long end = -1;
    for (FileRange r : sorted) {
      if (r.getLength() < 0) {
        throw new IllegalArgumentException("vectored read: negative length in " + r);
      }
      if (r.getOffset() < 0) {
        throw new EOFException("vectored read: negative position in " + r);
      }
      if (r.getOffset() < end) {
        throw new IllegalArgumentException("vectored read: overlapping ranges at " + r);
      }
      end = r.getOffset() + r.getLength();
    }
  }

  private static ByteBuffer readRange(PositionedReadable in, FileRange r,
      IntFunction<ByteBuffer> allocate) throws IOException {
    ByteBuffer b = allocate.apply(r.getLength());
    if (b.hasArray()) {
      in.readFully(r.getOffset(), b.array(), b.arrayOffset() + b.position(), r.getLength());
      b.limit(b.position() + r.getLength());
    } else {
      byte[] tmp = new byte[r.getLength()];
      in.readFully(r.getOffset(), tmp, 0, tmp.length);
      b.put(tmp);
      b.flip();
    }
    return b;
  }
}
