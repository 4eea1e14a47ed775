package io.strata.core;

import io.strata.core.error.Op;
import io.strata.proto.v1.ListResponse;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * First pages of directories asked for ahead of their listing. When a listing has shown all its
 * entries, the directories among them are announced here, and the first pages of the next few
 * ({@code window}, in the order shown) are fetched meanwhile, so that a walker listing each in
 * turn ({@code hadoop fs -ls -R}, FsShell's recursion, Spark's file index) finds its answer here
 * instead of waiting a round trip for it. Directories announced later go first (a walk is depth
 * first); a listing taken from here makes room for the next announced one.
 *
 * <p>NB: a page taken from here was read after the listing that announced it ended, and at most
 * {@link #MAX_AGE_NANOS} before the listing that takes it began; where another client changed
 * the directory meanwhile, the page may not show it, as it would not had the listing run that
 * much earlier. A call of this client that may change the namespace (anything but a read) drops
 * every page asked for before it ended, so that a client always sees its own changes.
 *
 * <p>Safe for concurrent use.
 */
final class ListPrefetch implements Closeable {
  /** How old a prefetched page may be when its listing begins. */
  static final long MAX_AGE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
  /** Directories remembered as announced and not asked for yet. */
  private static final int MAX_WANTED = 4096;

  private final int window;
  private final long maxAgeNanos;
  private final Fetch fetch;
  private final ExecutorService pool;
  private final Object lock = new Object();
  // Guarded by lock:
  private final ArrayDeque<StrataPath> wanted = new ArrayDeque<>();
  private final Map<StrataPath, Held> held = new LinkedHashMap<>();
  private long generation;
  private boolean closed;
  private long asked;
  private long used;

  private record Held(long generation, long asked, CompletableFuture<ListResponse> page) {}

  /** Fetches one page of a listing: {@code dir}'s entries after {@code after}. */
  @FunctionalInterface
  interface Fetch {
    ListResponse page(StrataPath dir, String after) throws IOException;
  }

  /**
   * Prefetches up to {@code window} first pages at a time with {@code fetch}, on as many threads
   * named {@code threadName}; none, and no page ahead either ({@link #ahead}), if 0.
   */
  ListPrefetch(int window, Fetch fetch, String threadName) {
    this(window, MAX_AGE_NANOS, fetch, threadName);
  }

  ListPrefetch(int window, long maxAgeNanos, Fetch fetch, String threadName) {
    this.window = window;
    this.maxAgeNanos = maxAgeNanos;
    this.fetch = fetch;
    this.pool = window <= 0 ? null : new ThreadPoolExecutor(window, window, 10, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, threadName);
          t.setDaemon(true);
          return t;
        });
    if (pool != null) {
      ((ThreadPoolExecutor) pool).allowCoreThreadTimeOut(true);
    }
  }

  /** Whether a call of {@code op} leaves the namespace as it was. */
  static boolean isRead(Op op) {
    return switch (op) {
      case GET_FILE_STATUS, OPEN, READ, READ_TAIL, LIST, CONTENT_SUMMARY, SERVER_DEFAULTS,
          RENEW_LEASE, LIST_WORKERS, LIST_NAMESPACES, GET_XATTRS, GET_ACL_STATUS,
          GET_STORAGE_POLICY -> true;
      default -> false;
    };
  }

  /**
   * Drops every page asked for so far; called as a change of the namespace leaves and again when
   * it has been answered, so that a page read meanwhile is dropped too.
   */
  void invalidate() {
    if (pool == null) {
      return;
    }
    synchronized (lock) {
      generation++;
      held.clear();
    }
  }

  /** Announces directories a listing showed, in the order shown: they may be listed next. */
  void announce(List<StrataPath> dirs) {
    if (pool == null || dirs.isEmpty()) {
      return;
    }
    synchronized (lock) {
      for (int i = dirs.size() - 1; i >= 0; i--) {
        wanted.addFirst(dirs.get(i));
      }
      while (wanted.size() > MAX_WANTED) {
        wanted.removeLast();
      }
      fillLocked();
    }
  }

  /**
   * The first page of {@code dir}'s listing if it was prefetched and may still be used, else
   * null; forgets it either way. Waits for a page still on its way.
   */
  ListResponse take(StrataPath dir) {
    if (pool == null) {
      return null;
    }
    Held h;
    synchronized (lock) {
      h = held.remove(dir);
      if (h == null) {
        wanted.remove(dir);
      }
      fillLocked();
      if (h == null || h.generation != generation
          || System.nanoTime() - h.asked > maxAgeNanos) {
        return null;
      }
    }
    try {
      ListResponse page = h.page.get();
      synchronized (lock) { // a change left while the page was on its way
        if (h.generation != generation) {
          return null;
        }
        used++;
        return page;
      }
    } catch (ExecutionException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Asks for the first pages of the next wanted directories, up to {@code window} in flight;
   * forgets the pages too old to be used, and the oldest beyond {@code 8 * window} held.
   */
  private void fillLocked() {
    long now = System.nanoTime();
    int inFlight = 0;
    for (Iterator<Held> it = held.values().iterator(); it.hasNext(); ) {
      Held h = it.next();
      if (now - h.asked > maxAgeNanos) {
        it.remove();
      } else if (!h.page.isDone()) {
        inFlight++;
      }
    }
    while (!closed && inFlight < window && !wanted.isEmpty()) {
      StrataPath dir = wanted.pollFirst();
      if (held.containsKey(dir)) {
        continue;
      }
      Iterator<StrataPath> eldest = held.keySet().iterator();
      while (held.size() >= 8 * window) {
        eldest.next();
        eldest.remove();
      }
      CompletableFuture<ListResponse> page = ahead(dir, "");
      if (page == null) {
        return;
      }
      held.put(dir, new Held(generation, now, page));
      asked++;
      inFlight++;
      page.whenComplete((r, e) -> {
        synchronized (lock) {
          fillLocked();
        }
      });
    }
  }

  /**
   * Asks for the page of {@code dir}'s listing after {@code after} on the prefetch threads; null
   * if there are none. The future fails with {@link Failed} wrapping the fetch's IOException.
   */
  CompletableFuture<ListResponse> ahead(StrataPath dir, String after) {
    if (pool == null) {
      return null;
    }
    try {
      return CompletableFuture.supplyAsync(() -> {
        try {
          return fetch.page(dir, after);
        } catch (IOException e) {
          throw new Failed(e);
        }
      }, pool);
    } catch (java.util.concurrent.RejectedExecutionException e) { // closed
      return null;
    }
  }

  /** First pages asked for ahead, and how many of them a listing used. */
  long[] counts() {
    synchronized (lock) {
      return new long[] {asked, used};
    }
  }

  @Override
  public void close() {
    if (pool == null) {
      return;
    }
    synchronized (lock) {
      closed = true;
      held.clear();
      wanted.clear();
    }
    pool.shutdownNow();
  }

  /** A prefetch's IOException, as its future fails with it. */
  static final class Failed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failed(IOException e) {
      super(e);
    }
  }
}
