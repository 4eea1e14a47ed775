package io.strata.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * Runs one timed phase: {@code threads} threads each doing its own numbered operations, started
 * together, the latency of every operation recorded (microseconds, HdrHistogram). The phase's
 * time is from the start to the last thread's end. An operation that throws or answers false
 * counts as an error and the thread goes on; the first error is printed on stderr. Phases longer
 * than 10 s print their progress on stderr.
 */
final class Phase {
  /** One operation: thread {@code t}'s {@code i}-th. False is a failure (a rename that did not). */
  interface Op {
    boolean run(int t, long i) throws IOException;
  }

  /** What a phase did. done[t] is how many operations thread t got through (ok or not). */
  record Stats(long count, long errors, double secs, Histogram hist, long[] done) {
    /** Latency percentile, milliseconds. */
    double percentile(double p) {
      return count == 0 ? Double.NaN : hist.getValueAtPercentile(p) / 1000.0;
    }

    double max() {
      return count == 0 ? Double.NaN : hist.getMaxValue() / 1000.0;
    }
  }

  private static final long HIGHEST_MICROS = 3_600_000_000L;

  private Phase() {}

  /**
   * Runs {@code op} for i in [0, ops[t]) on each thread t, until {@code deadline} (System.nanoTime;
   * Long.MAX_VALUE for none). {@code name} labels progress and errors.
   */
  static Stats run(String name, int threads, long[] ops, long deadline, Op op) {
    Histogram[] hists = new Histogram[threads];
    long[] done = new long[threads];
    long[] errors = new long[threads];
    AtomicLong progress = new AtomicLong();
    AtomicReference<String> firstError = new AtomicReference<>();
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int tid = t;
      hists[t] = new Histogram(HIGHEST_MICROS, 3);
      Thread th = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        for (long i = 0; i < ops[tid] && System.nanoTime() < deadline; i++) {
          long start = System.nanoTime();
          boolean ok;
          try {
            ok = op.run(tid, i);
            if (!ok) {
              firstError.compareAndSet(null, "operation " + i + " of thread " + tid + " failed");
            }
          } catch (IOException | RuntimeException e) {
            ok = false;
            firstError.compareAndSet(null, e.toString());
          }
          long micros = Math.min(HIGHEST_MICROS, Math.max(1, (System.nanoTime() - start) / 1000));
          hists[tid].recordValue(micros);
          done[tid] = i + 1;
          if (!ok) {
            errors[tid]++;
          }
          progress.incrementAndGet();
        }
      }, name + "-" + t);
      th.setDaemon(true);
      ts.add(th);
      th.start();
    }
    long total = 0;
    for (long n : ops) {
      total += n;
    }
    long start = System.nanoTime();
    go.countDown();
    join(name, ts, progress, total, start);
    double secs = (System.nanoTime() - start) / 1e9;
    Histogram all = new Histogram(HIGHEST_MICROS, 3);
    long count = 0;
    long errs = 0;
    for (int t = 0; t < threads; t++) {
      all.add(hists[t]);
      count += done[t];
      errs += errors[t];
    }
    if (firstError.get() != null) {
      System.err.printf("fsbench: %s: %d errors, the first: %s%n", name, errs, firstError.get());
    }
    return new Stats(count, errs, secs, all, done);
  }

  private static void join(String name, List<Thread> ts, AtomicLong progress, long total,
      long start) {
    long lastReport = start;
    for (Thread th : ts) {
      while (th.isAlive()) {
        try {
          th.join(1000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", e);
        }
        long now = System.nanoTime();
        if (now - lastReport > 10_000_000_000L) {
          lastReport = now;
          long n = progress.get();
          System.err.printf("fsbench: %s: %d/%d (%.0f/s)%n", name, n, total,
              n / ((now - start) / 1e9));
        }
      }
    }
  }

  /** Splits {@code total} operations among {@code threads} threads (the first ones get the rest). */
  static long[] split(long total, int threads) {
    long[] ops = new long[threads];
    for (int t = 0; t < threads; t++) {
      ops[t] = total / threads + (t < total % threads ? 1 : 0);
    }
    return ops;
  }
}
