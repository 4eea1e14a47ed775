package io.strata.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

public class LeaseRenewerTest {
  @Test
  public void renewsOnlyWhileWritersAreOpen() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    try (LeaseRenewer r = new LeaseRenewer(calls::incrementAndGet, Duration.ofMillis(20), "t")) {
      assertFalse(r.running());
      r.acquire();
      r.acquire();
      assertTrue(r.running());
      waitFor(() -> calls.get() >= 3);
      r.release();
      assertTrue("one writer is still open", r.running());
      r.release();
      assertFalse(r.running());
      int after = calls.get();
      Thread.sleep(100);
      assertTrue("no renewal once stopped", calls.get() <= after + 1);
      r.release(); // more releases than acquires are harmless
      assertFalse(r.running());
    }
  }

  @Test
  public void oneThreadServesWriterAfterWriter() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    try (LeaseRenewer r = new LeaseRenewer(calls::incrementAndGet, Duration.ofHours(1), "t")) {
      for (int i = 0; i < 100; i++) {
        r.acquire();
        assertTrue(r.running());
        r.release();
        assertFalse(r.running());
      }
      assertEquals(1, r.threadsStarted());
    }
  }

  @Test
  public void theThreadEndsAnIntervalAfterTheLastWriter() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    try (LeaseRenewer r = new LeaseRenewer(calls::incrementAndGet, Duration.ofMillis(20), "t")) {
      r.acquire();
      r.release();
      waitFor(() -> !r.threadAlive());
      r.acquire();
      waitFor(() -> calls.get() >= 2);
      assertEquals("a writer after the thread ended starts another", 2, r.threadsStarted());
    }
  }

  @Test
  public void failuresDoNotStopTheRenewals() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    LeaseRenewer.Renewal failing = () -> {
      calls.incrementAndGet();
      throw new java.io.IOException("service down");
    };
    try (LeaseRenewer r = new LeaseRenewer(failing, Duration.ofMillis(10), "t")) {
      r.acquire();
      waitFor(() -> calls.get() >= 3);
      assertEquals(0, r.renewals());
    }
  }

  static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(5);
    }
  }
}
