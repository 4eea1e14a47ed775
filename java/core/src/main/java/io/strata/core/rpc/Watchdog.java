package io.strata.core.rpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Ends the callwire reads that outlive their deadline, so that a read with a distant deadline
 * can wait without a timeout.
 *
 * <p>Why: a SocketChannel's read with a timeout (its socket's soTimeout) costs five system calls
 * on JDK 17 (the channel made non-blocking, a read that finds nothing, a poll, the read, the
 * channel made blocking again); without one, a single blocking read. {@link CallSocket} reads
 * so when the deadline is at least {@link #MIN_NANOS} away, and registers the read here: one
 * daemon thread, started at the first registration, looks every {@link #PERIOD_NANOS} and
 * closes the connection of a read past its deadline (so a deadline is kept to within that
 * period, a tenth of the shortest one watched). A nearer deadline is left to the socket's
 * timeout.
 *
 * <p>Safe for concurrent use.
 */
final class Watchdog {
  /** The shortest time left that a read is watched for, rather than timed by its socket. */
  static final long MIN_NANOS = TimeUnit.SECONDS.toNanos(2);

  /** How often the thread looks. */
  static final long PERIOD_NANOS = MIN_NANOS / 10;

  private static final Set<Watched> WATCHED = ConcurrentHashMap.newKeySet();
  private static final AtomicInteger STARTED = new AtomicInteger();

  private Watchdog() {}

  /** A read that may be ended: its deadline (System.nanoTime) and how to end it. */
  abstract static class Watched {
    private static final int READING = 0;
    private static final int DONE = 1;
    private static final int EXPIRED = 2;

    private final AtomicInteger state = new AtomicInteger(DONE);
    private volatile long deadline;

    /** Ends the read at once: closes its connection. Called on the watchdog's thread. */
    abstract void expire();

    /** Starts watching a read that must end by {@code deadline}. */
    final void watch(long deadline) {
      this.deadline = deadline;
      state.set(READING);
      WATCHED.add(this);
      if (STARTED.get() == 0 && STARTED.compareAndSet(0, 1)) {
        Thread t = new Thread(Watchdog::run, "strata-callwire-watchdog");
        t.setDaemon(true);
        t.start();
      }
    }

    /**
     * Stops watching the read; false if the watchdog ended it (its connection is closed: the
     * read timed out, whatever it returned).
     */
    final boolean unwatch() {
      WATCHED.remove(this);
      return state.compareAndSet(READING, DONE);
    }
  }

  private static void run() {
    for (;;) {
      long now = System.nanoTime();
      for (Watched w : WATCHED) {
        if (now - w.deadline >= 0 && w.state.compareAndSet(Watched.READING, Watched.EXPIRED)) {
          WATCHED.remove(w);
          w.expire();
        }
      }
      // NB: not a sleep, which an interrupt would end: the thread must go on.
      LockSupport.parkNanos(PERIOD_NANOS);
    }
  }
}
