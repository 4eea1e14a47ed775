package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.Op;
import io.strata.proto.v1.ListResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.After;
import org.junit.Test;

/** ListPrefetch over a fetch of its own: which pages it asks for, and which it hands out. */
public class ListPrefetchTest {
  private static final long HOUR = TimeUnit.HOURS.toNanos(1);

  /** Records the directories asked for; each answer waits for its gate, if it has one. */
  private final List<StrataPath> asked = new ArrayList<>();
  private final Map<StrataPath, CountDownLatch> gates = new ConcurrentHashMap<>();
  private final Map<StrataPath, ListResponse> pages = new ConcurrentHashMap<>();
  private ListPrefetch prefetch;

  private ListPrefetch make(int window) {
    prefetch = new ListPrefetch(window, HOUR, (dir, after) -> {
      assertEquals("", after);
      synchronized (asked) {
        asked.add(dir);
      }
      CountDownLatch gate = gates.get(dir);
      if (gate != null) {
        try {
          gate.await();
        } catch (InterruptedException e) {
          throw new java.io.InterruptedIOException();
        }
      }
      if (dir.name().startsWith("bad")) {
        throw new IOException("no " + dir);
      }
      return pages.computeIfAbsent(dir, d -> ListResponse.newBuilder().setHasMore(true).build());
    }, "test-prefetch");
    return prefetch;
  }

  @After
  public void tearDown() {
    if (prefetch != null) {
      prefetch.close();
    }
  }

  private static List<StrataPath> dirs(String... names) {
    List<StrataPath> out = new ArrayList<>();
    for (String n : names) {
      out.add(StrataPath.parse("/p/" + n));
    }
    return out;
  }

  private List<StrataPath> asked() {
    synchronized (asked) {
      return new ArrayList<>(asked);
    }
  }

  @Test
  public void asksForTheWindowInOrderAndMovesOnAsPagesAreTaken() {
    List<StrataPath> d = dirs("a", "b", "c", "d");
    for (StrataPath p : d) {
      gates.put(p, new CountDownLatch(1));
    }
    make(2).announce(d);
    // Two in flight, the others wait for a place (which two threads start first is theirs).
    gates.get(d.get(0)).countDown();
    assertTaken(d.get(0));
    gates.get(d.get(1)).countDown();
    gates.get(d.get(2)).countDown();
    assertTaken(d.get(1));
    assertTaken(d.get(2));
    gates.get(d.get(3)).countDown();
    assertTaken(d.get(3));
    assertEquals(new java.util.HashSet<>(d), new java.util.HashSet<>(asked()));
    assertEquals(4, asked().size());
    assertArrayEquals(new long[] {4, 4}, prefetch.counts());
  }

  /** take gives the very page the fetch answered for p. */
  private void assertTaken(StrataPath p) {
    ListResponse r = waitTake(p);
    assertSame(pages.get(p), r);
  }

  /** take, for a page that may still be on its way (take waits for it). */
  private ListResponse waitTake(StrataPath p) {
    ListResponse r = prefetch.take(p);
    assertTrue("no page for " + p, r != null);
    return r;
  }

  @Test
  public void laterAnnouncementsGoFirst() throws Exception {
    make(1);
    List<StrataPath> top = dirs("a", "b");
    CountDownLatch gate = new CountDownLatch(1);
    gates.put(top.get(0), gate);
    prefetch.announce(top); // a asked for; b waits
    List<StrataPath> deeper = List.of(top.get(0).child("x"));
    prefetch.announce(deeper); // goes before b
    gate.countDown();
    waitTake(top.get(0));
    waitTake(deeper.get(0));
    waitTake(top.get(1));
    assertEquals(List.of(top.get(0), deeper.get(0), top.get(1)), asked());
  }

  @Test
  public void aChangeDropsWhatWasAskedBeforeIt() {
    make(4);
    List<StrataPath> d = dirs("a", "b");
    CountDownLatch gate = new CountDownLatch(1);
    gates.put(d.get(1), gate);
    prefetch.announce(d);
    waitTake(d.get(0)); // answered, taken: fine
    prefetch.invalidate(); // b is on its way: its answer may be from before the change
    gate.countDown();
    assertNull(prefetch.take(d.get(1)));
  }

  @Test
  public void aPageOnItsWayWhenAChangeLeavesIsDropped() throws Exception {
    make(1);
    List<StrataPath> d = dirs("a");
    CountDownLatch gate = new CountDownLatch(1);
    gates.put(d.get(0), gate);
    prefetch.announce(d);
    Thread changer = new Thread(() -> {
      // The change leaves after take began waiting for the page, and before it came.
      while (asked().isEmpty()) {
        Thread.onSpinWait();
      }
      prefetch.invalidate();
      gate.countDown();
    });
    changer.start();
    assertNull(prefetch.take(d.get(0)));
    changer.join();
  }

  @Test
  public void failuresAndUnknownDirectoriesGiveNothing() {
    make(2);
    List<StrataPath> d = dirs("bad", "ok");
    prefetch.announce(d);
    assertNull("a failed prefetch: the listing asks itself", prefetch.take(d.get(0)));
    assertNull(prefetch.take(StrataPath.parse("/elsewhere")));
    waitTake(d.get(1));
  }

  @Test
  public void aDirectoryListedBeforeItsTurnIsNotAskedFor() {
    make(1);
    List<StrataPath> d = dirs("a", "b", "c");
    CountDownLatch gate = new CountDownLatch(1);
    gates.put(d.get(0), gate);
    prefetch.announce(d);
    assertNull(prefetch.take(d.get(1))); // listed before its turn: not wanted any more
    gate.countDown();
    waitTake(d.get(0));
    waitTake(d.get(2));
    assertEquals(List.of(d.get(0), d.get(2)), asked());
  }

  @Test
  public void offAsksForNothing() {
    make(0).announce(dirs("a"));
    assertNull(prefetch.take(dirs("a").get(0)));
    assertNull(prefetch.ahead(dirs("a").get(0), ""));
    assertTrue(asked().isEmpty());
  }

  @Test
  public void onlyReadsLeaveTheNamespaceAlone() {
    assertTrue(ListPrefetch.isRead(Op.LIST));
    assertTrue(ListPrefetch.isRead(Op.GET_FILE_STATUS));
    for (Op op : new Op[] {Op.CREATE, Op.MKDIRS, Op.RENAME, Op.DELETE, Op.COMPLETE, Op.SET_OWNER,
        Op.SET_PERMISSION, Op.SET_TIMES, Op.APPEND, Op.TRUNCATE, Op.FLUSH, Op.ADMIN}) {
      assertTrue(op.name(), !ListPrefetch.isRead(op));
    }
  }
}
