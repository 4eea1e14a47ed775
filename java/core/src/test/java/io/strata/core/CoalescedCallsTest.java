package io.strata.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.StrataFileNotFoundException;
import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * Many threads of one client, more than it keeps calls in flight, against a real strata server
 * --dev: their calls leave in Batch RPCs ({@link io.strata.core.rpc.Coalescer}), and every
 * answer is the one the call alone would have had.
 */
public class CoalescedCallsTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private static final int THREADS = 32;
  private static final int FILES = 12;

  @Test
  public void concurrentCallsLeaveInBatchesAndEachGetsItsOwnAnswer() throws Exception {
    try (StrataClient c = client(1)) {
      StrataPath base = run(c);
      assertTrue("no call was coalesced", c.batchesSent() > 0);
      c.delete(base, true);
    }
  }

  @Test
  public void noneInFlightSendsEveryCallAlone() throws Exception {
    try (StrataClient c = client(0)) {
      StrataPath base = run(c);
      assertEquals(0, c.batchesSent());
      c.delete(base, true);
    }
  }

  /** A client keeping {@code inFlight} RPCs of reads, and as many of mutations, in flight. */
  private static StrataClient client(int inFlight) {
    return StrataClient.connect(SERVER.clientConfig()
        .batchesInFlight(inFlight).mutationsInFlight(inFlight).build());
  }

  /** Runs the threads' calls, checking each answer; returns their base directory. */
  private static StrataPath run(StrataClient c) throws Exception {
    StrataPath base = StrataPath.parse("/coalesced-" + System.nanoTime());
    assertTrue(c.mkdirs(base, 0755, true));
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<Void>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        StrataPath dir = base.child("t" + t);
        done.add(pool.submit((Callable<Void>) () -> {
          calls(c, dir);
          return null;
        }));
      }
      for (Future<Void> f : done) {
        f.get(5, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    for (int t = 0; t < THREADS; t++) {
      ContentSummary sum = c.getContentSummary(base.child("t" + t));
      assertEquals("files left in t" + t, FILES / 2, sum.fileCount());
    }
    return base;
  }

  /** One thread's calls: mkdirs, create, getFileStatus, rename, delete, each answer checked. */
  private static void calls(StrataClient c, StrataPath dir) throws IOException {
    assertTrue(c.mkdirs(dir, 0755, false));
    assertFalse(c.mkdirs(dir, 0755, false));
    for (int i = 0; i < FILES; i++) {
      StrataPath p = dir.child("f" + i);
      byte[] data = p.toString().getBytes(StandardCharsets.UTF_8);
      try (FileWriter w = c.create(p, CreateOptions.defaults())) {
        w.write(data);
      }
      FileInfo st = c.getFileStatus(p);
      assertEquals(p, st.path());
      assertEquals(data.length, st.length());
      StrataPath missing = dir.child("f" + i + ".missing");
      StrataFileNotFoundException e = assertThrows(StrataFileNotFoundException.class,
          () -> c.getFileStatus(missing));
      assertEquals(missing.toString(), e.path());
      StrataPath renamed = dir.child("f" + i + ".renamed");
      assertEquals(renamed, c.rename(p, renamed, false, false));
      if (i % 2 == 0) {
        assertTrue(c.delete(renamed, false));
        assertFalse(c.delete(renamed, false));
      }
    }
  }
}
