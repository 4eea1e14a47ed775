package io.strata.core.testing;

import java.io.IOException;
import java.util.List;

/**
 * A real {@code strata worker} process on loopback, for a {@link MetaGroup}: its state and cache
 * in a fresh directory (removed at close), its stderr in target/strata-logs/worker-*.log. It
 * registers with the service on its own; callers wait for that through the service.
 */
public final class WorkerProcess implements AutoCloseable {
  private final DevCluster.Launched launched;

  private WorkerProcess(DevCluster.Launched launched) {
    this.launched = launched;
  }

  /**
   * Starts a worker of the service at {@code meta}, proving itself with the superuser's token
   * in {@code tokenFile}, and waits until it serves.
   */
  public static WorkerProcess start(String meta, java.nio.file.Path tokenFile) throws IOException {
    return new WorkerProcess(DevCluster.launch("worker", " serving on ", java.util.Map.of(), d -> List.of("worker",
        "--meta", meta, "--listen", "127.0.0.1:0", "--state-dir", d.toString(),
        "--cache-size", "1GiB", "--token-file", tokenFile.toString())));
  }

  /** The host:port the worker serves on. */
  public String address() {
    return launched.address();
  }

  /** Kills the worker with SIGKILL and waits until it is gone; its directory stays. */
  public void kill() throws InterruptedException {
    launched.process().destroyForcibly();
    launched.process().waitFor();
  }

  /** Kills the worker and removes its directory. */
  @Override
  public void close() throws IOException {
    try {
      kill();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    DevCluster.deleteTree(launched.dir());
  }
}
