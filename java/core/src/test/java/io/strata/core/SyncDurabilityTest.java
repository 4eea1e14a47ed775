package io.strata.core;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevCluster;
import io.strata.core.testing.MetaGroup;
import io.strata.core.testing.SyncingWriter;
import io.strata.core.testing.WorkerProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import org.junit.Test;

/**
 * hsync's promise against real processes killed with SIGKILL (the Go client's flush_test.go):
 * what a writer synced survives the writer, and a worker, and lease recovery closes the file
 * with every synced byte (the service makes a block of the flushed tail).
 */
public class SyncDurabilityTest {
  private static final int SIZE = 700_000;
  private static final int ROUNDS = 4;

  /** The writer is killed after it synced: recovery keeps every synced byte. */
  @Test
  public void syncedBytesSurviveAKilledWriter() throws Exception {
    try (DevCluster server = DevCluster.start();
        StrataClient c = StrataClient.connect(server.clientConfig().build())) {
      Process writer = SyncingWriter.start(server.address(), server.token(), "/synced", SIZE,
          ROUNDS);
      writer.destroyForcibly();
      writer.waitFor();
      checkRecovered(c, StrataPath.parse("/synced"));
    }
  }

  /**
   * The worker that took the writer's blocks is killed after the writer synced, then the writer:
   * the finished blocks are in the bucket and the rest in the service's log, so a new worker
   * reads every synced byte after recovery.
   */
  @Test
  public void syncedBytesSurviveAKilledWorker() throws Exception {
    try (MetaGroup meta = MetaGroup.launch(1)) {
      meta.createNamespace("default");
      String token = meta.token();
      java.nio.file.Path tokenFile = meta.tokenFile().orElseThrow();
      try (StrataClient c = StrataClient.connect(ClientConfig.builder(meta.metaAddress())
              .token(io.strata.core.StrataToken.parse(token)).build());
          WorkerProcess first = WorkerProcess.start(meta.metaAddress(), tokenFile)) {
        awaitWorkers(c, 1);
        Process writer = SyncingWriter.start(meta.metaAddress(), token, "/w", SIZE, ROUNDS);
        first.kill();
        writer.destroyForcibly();
        writer.waitFor();
        WorkerProcess second = WorkerProcess.start(meta.metaAddress(), tokenFile);
        try {
          awaitWorkers(c, 1);
          checkRecovered(c, StrataPath.parse("/w"));
        } finally {
          second.close();
        }
      }
    }
  }

  /** Recovers the lease of {@code p} and checks the file starts with every synced byte. */
  private static void checkRecovered(StrataClient c, StrataPath p) throws Exception {
    recover(c, p);
    ByteArrayOutputStream synced = new ByteArrayOutputStream();
    for (int i = 0; i < ROUNDS; i++) {
      synced.write(SyncingWriter.round(i, SIZE));
    }
    byte[] got = DataPathTest.read(c, p);
    assertTrue("recovered " + got.length + " bytes of " + synced.size() + " synced",
        got.length >= synced.size());
    assertArrayEquals(synced.toByteArray(), Arrays.copyOf(got, synced.size()));
  }

  /** Recovers the lease of {@code p} until the service says the file is closed. */
  private static void recover(StrataClient c, StrataPath p) throws Exception {
    for (int i = 0; i < 100; i++) {
      if (c.recoverLease(p)) {
        return;
      }
      Thread.sleep(10); // polling the recovery
    }
    throw new AssertionError(p + " was never closed");
  }

  /** Polls until {@code n} workers are live (the new one registered, the dead one gone). */
  private static void awaitWorkers(StrataClient c, int n) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      try {
        if (c.workerStats().size() == n) {
          return;
        }
      } catch (IOException e) {
        // a worker the list still names is gone: ask again
      }
      Thread.sleep(20); // polling the registration
    }
    throw new AssertionError("never " + n + " live workers");
  }
}
