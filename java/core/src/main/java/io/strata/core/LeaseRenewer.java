package io.strata.core;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Renews the client's leases while it has files open for writing: one call per client, not per
 * file, every interval, on one daemon thread (as the Go client and HDFS's LeaseRenewer do). A
 * failed renewal is logged and retried at the next tick; the service's soft limit (60 s) leaves
 * room for two misses.
 *
 * <p>The thread outlives the last writer by one interval, as HDFS's renewer lingers for a grace
 * period, and ends then if no writer came meanwhile. NB: a thread started at each first writer
 * and stopped at each last one was a thread for every file a single thread creates and closes
 * (1,222 in 56 s of FsBench's metadata phases), each costing more than the file's create.
 */
final class LeaseRenewer implements AutoCloseable {
  /** The renewal call; it throws on failure. */
  interface Renewal {
    void renew() throws Exception;
  }

  private static final System.Logger LOG = System.getLogger(LeaseRenewer.class.getName());

  private final Renewal renewal;
  private final Duration interval;
  private final String threadName;
  private final AtomicLong renewals = new AtomicLong();
  private final AtomicLong threads = new AtomicLong();

  private final Object mu = new Object();
  // Guarded by mu.
  private int writers;
  private ScheduledExecutorService executor;
  private ScheduledFuture<?> task;
  /** Ends the thread one interval after the last writer, unless another came. */
  private ScheduledFuture<?> idle;

  LeaseRenewer(Renewal renewal, Duration interval, String threadName) {
    this.renewal = renewal;
    this.interval = interval;
    this.threadName = threadName;
  }

  /** Registers an open writer; the first starts the renewals. */
  void acquire() {
    synchronized (mu) {
      writers++;
      if (writers == 1) {
        startLocked();
      }
    }
  }

  /** Unregisters a writer; the last stops the renewals. */
  void release() {
    synchronized (mu) {
      if (writers == 0) {
        return;
      }
      writers--;
      if (writers == 0) {
        stopLocked();
      }
    }
  }

  /** Number of successful renewals so far (for tests and metrics). */
  long renewals() {
    return renewals.get();
  }

  /** Number of threads started so far (for tests). */
  long threadsStarted() {
    return threads.get();
  }

  /** Whether the renewer has a thread (running, or lingering after the last writer). */
  boolean threadAlive() {
    synchronized (mu) {
      return executor != null;
    }
  }

  /** Whether renewals are running. */
  boolean running() {
    synchronized (mu) {
      return task != null;
    }
  }

  @Override
  public void close() {
    synchronized (mu) {
      writers = 0;
      if (task != null) {
        task.cancel(false);
        task = null;
      }
      idle = null;
      if (executor != null) {
        executor.shutdownNow();
        executor = null;
      }
    }
  }

  private void startLocked() {
    if (idle != null) {
      idle.cancel(false);
      idle = null;
    }
    if (executor == null) {
      executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, threadName);
        t.setDaemon(true);
        threads.incrementAndGet();
        return t;
      });
    }
    long ms = interval.toMillis();
    task = executor.scheduleWithFixedDelay(this::renewOnce, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Stops the renewals; the thread ends one interval later if no writer came. */
  private void stopLocked() {
    if (task != null) {
      task.cancel(false);
      task = null;
    }
    if (executor != null && writers == 0 && idle == null) {
      ScheduledExecutorService e = executor;
      idle = e.schedule(() -> endIdle(e), interval.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** Ends thread {@code e} if it is still this renewer's and no writer is open. */
  private void endIdle(ScheduledExecutorService e) {
    synchronized (mu) {
      if (executor == e && writers == 0) {
        idle = null;
        executor = null;
        e.shutdown();
      }
    }
  }

  private void renewOnce() {
    try {
      renewal.renew();
      renewals.incrementAndGet();
    } catch (Exception e) {
      LOG.log(Level.WARNING, "strata: lease renewal failed; retrying in " + interval, e);
    }
  }
}
