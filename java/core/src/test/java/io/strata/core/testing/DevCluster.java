package io.strata.core.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A real {@code strata server --dev} process on loopback with a fresh data directory: the
 * service the integration tests talk to. The binary comes from the system property {@value
 * #BINARY_PROPERTY} (Maven sets it to bin/strata); a missing binary fails the test with a message
 * saying how to build it, never skips it. The server's stderr is kept in target/ for post-mortems.
 */
public final class DevCluster implements AutoCloseable {
  /** System property naming the strata binary. */
  public static final String BINARY_PROPERTY = "strata.binary";

  private static final String READY = "strata: serving on ";
  private static final long START_TIMEOUT_SECONDS = 60;

  private final Process process;
  private final Path dataDir;
  private final String address;

  private DevCluster(Process process, Path dataDir, String address) {
    this.process = process;
    this.dataDir = dataDir;
    this.address = address;
  }

  /** Starts a server and waits until it serves. */
  public static DevCluster start() throws IOException {
    Launched l = launch("server", READY, d -> List.of("server", "--dev", "--data-dir",
        d.toString(), "--listen", "127.0.0.1:0"));
    return new DevCluster(l.process(), l.dir(), l.address());
  }

  /** A strata process that serves: its own directory and the address it said. */
  record Launched(Process process, Path dir, String address) {}

  /**
   * Runs the strata binary with {@code args} of a fresh temporary directory and waits until its
   * stderr has a line with {@code marker} (followed by its address); its stderr goes to
   * target/strata-logs/KIND-*.log. A process that does not serve is killed, its directory
   * removed.
   */
  static Launched launch(String kind, String marker, Function<Path, List<String>> args)
      throws IOException {
    Path dir = Files.createTempDirectory("strata-" + kind + "-");
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path log = Files.createTempFile(logDir, kind + "-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(args.apply(dir));
    Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread pump = new Thread(() -> pumpStderr(p, log, ready, marker), "strata-" + kind
        + "-stderr");
    pump.setDaemon(true);
    pump.start();
    try {
      return new Launched(p, dir, ready.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS));
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      p.destroyForcibly();
      deleteTree(dir);
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IOException("strata " + kind + " did not start (" + e + "); its log: " + log
          + "\n" + Files.readString(log), e);
    }
  }

  /** The host:port the server listens on. */
  public String address() {
    return address;
  }

  /** The server's data directory. */
  public Path dataDir() {
    return dataDir;
  }

  /** Stops the server and removes its data. */
  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    deleteTree(dataDir);
  }

  /** The strata binary named by {@value #BINARY_PROPERTY}, checked to be executable. */
  static Path binary() {
    String prop = System.getProperty(BINARY_PROPERTY);
    if (prop == null || prop.isEmpty()) {
      throw new IllegalStateException("system property " + BINARY_PROPERTY + " is not set: run "
          + "the tests through Maven (java/pom.xml sets it to bin/strata) or pass -D"
          + BINARY_PROPERTY + "=/path/to/strata");
    }
    Path b = Paths.get(prop).toAbsolutePath().normalize();
    if (!Files.isExecutable(b)) {
      throw new IllegalStateException("the strata binary " + b + " (from -D" + BINARY_PROPERTY
          + ") does not exist or is not executable: build it first with `make build` "
          + "(go build -o bin/strata ./cmd/strata) at the repository root");
    }
    return b;
  }

  /**
   * Copies {@code p}'s stderr to {@code log} until it ends, completing {@code ready} with the
   * address of the first "strata: serving on ADDR" line (exceptionally if it exits first).
   */
  static void pumpStderr(Process p, Path log, CompletableFuture<String> ready) {
    pumpStderr(p, log, ready, READY);
  }

  /**
   * As above, for the line holding {@code marker} (a worker says "strata: worker ID serving on
   * ADDR"): {@code ready} gets what follows the marker.
   */
  static void pumpStderr(Process p, Path log, CompletableFuture<String> ready, String marker) {
    try (BufferedReader r = new BufferedReader(
            new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        PrintWriter w = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8),
            true)) {
      String line;
      while ((line = r.readLine()) != null) {
        w.println(line);
        int at = line.indexOf(marker);
        if (at >= 0) {
          ready.complete(line.substring(at + marker.length()).trim());
        }
      }
      ready.completeExceptionally(new IOException("strata exited with status "
          + p.waitFor() + " before serving"));
    } catch (IOException | InterruptedException e) {
      ready.completeExceptionally(e);
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(f);
      }
    }
  }
}
