package io.strata.hbase.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * What HBase's log asks of a file system, on the file system alone (make bench-hbase): writers,
 * each with a file of its own, write records of {@link #RECORD} bytes, each followed by an
 * {@code hflush} (the log's sync under SYNC_WAL, HBase's default) or an {@code hsync} (FSYNC_WAL,
 * or {@code hbase.wal.hsync}). A sample is a record's write and its sync; the throughput is all
 * writers' samples over the time from the first to the last.
 *
 * <p>Each file's first record and sync are made before the clock starts: a file's create and its
 * first sync set up what the later ones use (HDFS's pipeline; Strata's first block, which the
 * first flush ends), once per log file, where a log file takes hundreds of thousands of syncs.
 */
final class SyncBench {
  /** A record's size: a YCSB row of 10 fields of 100 bytes is about this in the log. */
  static final int RECORD = 1000;

  /** One case's result: samples, nanoseconds from the first to the last, latencies in µs. */
  record Result(long ops, long nanos, Histogram latencies) {}

  private final FileSystem fs;
  private final Path dir;

  SyncBench(FileSystem fs, Path dir) {
    this.fs = fs;
    this.dir = dir;
  }

  /** Runs {@code writers} writers of {@code syncs} records each, syncing with hsync or hflush. */
  Result run(int writers, int syncs, boolean hsync) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    CyclicBarrier ready = new CyclicBarrier(writers + 1);
    CyclicBarrier done = new CyclicBarrier(writers + 1);
    List<Future<Histogram>> results = new ArrayList<>();
    String name = (hsync ? "hsync-" : "hflush-") + writers + "-" + System.nanoTime() + "-";
    try {
      for (int w = 0; w < writers; w++) {
        Path f = new Path(dir, name + w);
        results.add(pool.submit(() -> writer(f, syncs, hsync, ready, done)));
      }
      ready.await();
      long start = System.nanoTime();
      done.await();
      long nanos = System.nanoTime() - start;
      Histogram all = TimedDB.newHistogram();
      for (Future<Histogram> r : results) {
        all.add(r.get());
      }
      return new Result((long) writers * syncs, nanos, all);
    } finally {
      pool.shutdownNow();
      for (int w = 0; w < writers; w++) {
        fs.delete(new Path(dir, name + w), false);
      }
    }
  }

  private Histogram writer(Path f, int syncs, boolean hsync, CyclicBarrier ready,
      CyclicBarrier done) throws Exception {
    Histogram h = TimedDB.newHistogram();
    byte[] rec = new byte[RECORD];
    try (FSDataOutputStream o = fs.create(f)) {
      sync(o, rec, hsync); // the file's first: see the class's doc
      ready.await();
      for (int i = 0; i < syncs; i++) {
        long t = System.nanoTime();
        sync(o, rec, hsync);
        h.recordValue(Math.max(1, (System.nanoTime() - t) / 1000));
      }
      done.await();
    } catch (IOException | RuntimeException e) {
      ready.reset();
      done.reset();
      throw e;
    }
    return h;
  }

  private static void sync(FSDataOutputStream o, byte[] rec, boolean hsync) throws IOException {
    o.write(rec);
    if (hsync) {
      o.hsync();
    } else {
      o.hflush();
    }
  }
}
