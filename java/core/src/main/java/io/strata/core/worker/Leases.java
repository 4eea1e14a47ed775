package io.strata.core.worker;

import io.strata.proto.v1.ShortCircuitResponse;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cache files one worker lent this client (short-circuit reads), kept open with the CRCs of
 * the units lent, so that a reader going on through a block reads it without asking the worker
 * again: the worker lends the pages cached past the range asked for (up to 64 MiB), and blocks
 * never change, so the CRCs hold for as long as the file is read (the Go client's leases,
 * sclease.go). A lease ends {@link #ttlNanos} after it was given, so that the worker's LRU hears of
 * the reads at least that often and a file the cache evicted is let go; a unit that fails its
 * CRC ends it at once. At most {@link #MAX} are held. Safe for concurrent use: a lease in use
 * is closed only once its last reader is done.
 */
final class Leases implements AutoCloseable {
  /** How long a lease serves reads (the Go client's leaseTTL); tests lengthen it. */
  static volatile long ttlNanos = 2_000_000_000L;

  /** The most leases held per worker, each an open file. */
  static final int MAX = 64;

  /**
   * A block: its inode and id, and in cache mode the version of its object (a file opened again
   * after its object changed is another block's bytes, which a lease of the old version must not
   * serve).
   */
  record Key(long inode, long block, String version) {}

  /** A lent cache file and what the worker said of it. */
  static final class Lease {
    final FileChannel file;
    final ShortCircuitResponse resp;
    private final long expires;
    private final long end;
    // Guarded by this.
    private int refs = 1; // the table's
    private boolean closed;

    Lease(FileChannel file, ShortCircuitResponse resp, long now) {
      this.file = file;
      this.resp = resp;
      this.expires = now + ttlNanos;
      long unit = resp.getChunkSize() != 0 ? resp.getChunkSize() : resp.getPageSize();
      int count = resp.getChunkSize() != 0 ? resp.getChunkCrcsCount() : resp.getCrcsCount();
      this.end = Math.min(resp.getFirstPage() + count * unit, resp.getBlockLength());
    }

    /** Whether the lease holds {@code [in, in+len)} and is still in force at {@code now}. */
    boolean covers(long in, long len, long now) {
      return now - expires < 0 && in >= resp.getFirstPage() && in + len <= end;
    }

    private synchronized boolean acquire() {
      if (closed) {
        return false;
      }
      refs++;
      return true;
    }

    /** Ends a use that {@link Leases#get} began. */
    synchronized void release() {
      if (--refs == 0) {
        closed = true;
        try {
          file.close();
        } catch (IOException e) {
          // A read-only descriptor: nothing was written that a close could lose.
        }
      }
    }
  }

  // Guarded by this; in the order of use, eldest first.
  private final LinkedHashMap<Key, Lease> held = new LinkedHashMap<>(16, 0.75f, true);
  private boolean closed;

  /**
   * The lease of block {@code k} holding {@code [in, in+len)}, in use until its {@link
   * Lease#release}; null if none.
   */
  Lease get(Key k, long in, long len) {
    long now = System.nanoTime();
    synchronized (this) {
      Lease l = held.get(k);
      if (l == null) {
        return null;
      }
      if (now - l.expires >= 0) {
        held.remove(k);
        l.release();
        return null;
      }
      return l.covers(in, len, now) && l.acquire() ? l : null;
    }
  }

  /** Installs {@code l} as block {@code k}'s lease, ending the one it replaces. */
  void put(Key k, Lease l) {
    Lease old;
    synchronized (this) {
      if (closed) {
        old = l;
      } else {
        old = held.put(k, l);
        if (held.size() > MAX) {
          Iterator<Map.Entry<Key, Lease>> it = held.entrySet().iterator();
          it.next().getValue().release();
          it.remove();
        }
      }
    }
    if (old != null) {
      old.release(); // the one replaced, or l itself on a closed table
    }
  }

  /** Ends block {@code k}'s lease, if it is {@code l} (a unit of it failed its CRC). */
  synchronized void drop(Key k, Lease l) {
    if (held.remove(k, l)) {
      l.release();
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    held.values().forEach(Lease::release);
    held.clear();
  }
}
