package io.strata.core.testing;

import io.strata.core.ClientConfig;
import io.strata.core.StrataToken;
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
import java.util.Map;
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

  /**
   * Where the superuser's token of each service the tests started is, by every address of the
   * service (one member's, or all of them comma-separated): what {@link #tokenOf} reads.
   */
  private static final java.util.Map<String, java.util.function.Supplier<java.util.Optional<Path>>>
      TOKEN_FILES = new java.util.concurrent.ConcurrentHashMap<>();

  /** Records that the service at {@code address} keeps its superuser's token in a file. */
  static void registerTokenFile(String address,
      java.util.function.Supplier<java.util.Optional<Path>> file) {
    TOKEN_FILES.put(address, file);
  }

  /** Whether the tests started a service at {@code address}. */
  public static boolean started(String address) {
    return TOKEN_FILES.containsKey(address);
  }

  /**
   * The superuser's token of the service the tests started at {@code address}: the one helper
   * through which the tests' clients get their tokens.
   */
  public static String tokenOf(String address) {
    java.util.function.Supplier<java.util.Optional<Path>> f = TOKEN_FILES.get(address);
    if (f == null) {
      throw new IllegalStateException("no service started by the tests at " + address);
    }
    try {
      Path p = f.get().orElseThrow(() -> new IllegalStateException("the service at " + address
          + " wrote no token yet"));
      return Files.readString(p, StandardCharsets.UTF_8).trim();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Starts a server and waits until it serves. */
  public static DevCluster start() throws IOException {
    return start(Map.of());
  }

  /**
   * Starts a server with {@code env} added to its environment (say, the credentials of an S3
   * bucket that a cache-mode namespace is a view of) and waits until it serves.
   */
  public static DevCluster start(Map<String, String> env) throws IOException {
    return start(env, List.of());
  }

  /**
   * Starts a server with {@code env} added to its environment and {@code flags} to its command
   * line (say, {@code --block-token-lifetime 1s}), and waits until it serves.
   */
  public static DevCluster start(Map<String, String> env, List<String> flags)
      throws IOException {
    Launched l = launch("server", READY, env, d -> {
      List<String> args = new ArrayList<>(List.of("server", "--dev", "--data-dir", d.toString(),
          "--listen", "127.0.0.1:0", "--client-token-file="));
      args.addAll(flags);
      return args;
    });
    DevCluster c = new DevCluster(l.process(), l.dir(), l.address());
    registerTokenFile(c.address, () -> java.util.Optional.of(c.tokenFile()));
    return c;
  }

  /** A strata process that serves: its own directory and the address it said. */
  record Launched(Process process, Path dir, String address) {}

  /**
   * Runs the strata binary with {@code args} of a fresh temporary directory, and {@code env}
   * added to its environment, and waits until its stderr has a line with {@code marker}
   * (followed by its address); its stderr goes to target/strata-logs/KIND-*.log. A process that
   * does not serve is killed, its directory removed.
   */
  static Launched launch(String kind, String marker, Map<String, String> env,
      Function<Path, List<String>> args) throws IOException {
    Path dir = Files.createTempDirectory("strata-" + kind + "-");
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path log = Files.createTempFile(logDir, kind + "-", ".log");
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(args.apply(dir));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().putAll(env);
    Process p = pb.start();
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

  /**
   * The file holding the superuser's token, which the server wrote as it started
   * (docs/security.md): what the tests' clients prove themselves with.
   */
  public Path tokenFile() {
    return dataDir.resolve("token");
  }

  /** The superuser's token. */
  public String token() throws IOException {
    return Files.readString(tokenFile(), StandardCharsets.UTF_8).trim();
  }

  /** A token of {@code user} in {@code groups}, issued by the superuser. */
  public String token(String user, String... groups) throws IOException {
    List<String> args = new ArrayList<>(List.of("token", "create", "--user", user));
    if (groups.length > 0) {
      args.addAll(List.of("--groups", String.join(",", groups)));
    }
    String out = admin(args.toArray(new String[0]));
    for (String line : out.split("\n")) {
      if (line.startsWith("st1.")) {
        return line.trim();
      }
    }
    throw new IOException("strata admin token create printed no token: " + out);
  }

  /** A client configuration of this server with the superuser's token. */
  public ClientConfig.Builder clientConfig() {
    try {
      return ClientConfig.builder(address).token(StrataToken.parse(token()));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A client configuration of this server as {@code user} in {@code groups}. */
  public ClientConfig.Builder clientConfig(String user, String... groups) throws IOException {
    return ClientConfig.builder(address).token(StrataToken.parse(token(user, groups)));
  }

  /** The server's data directory. */
  public Path dataDir() {
    return dataDir;
  }

  /**
   * Runs {@code strata admin ARGS --meta ADDRESS} against this server (creating a namespace,
   * dropping a cache...), failing with the command's output if it does not exit 0 within a
   * minute; returns its standard output.
   */
  public String admin(String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(binary().toString(), "admin"));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--meta", address, "--token-file", tokenFile().toString()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", cmd) + ": did not finish in 60 s");
      }
      String text = out.get(10, TimeUnit.SECONDS);
      if (p.exitValue() != 0) {
        throw new IOException(String.join(" ", cmd) + ": exit status " + p.exitValue() + ":\n"
            + text);
      }
      return text;
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(String.join(" ", cmd) + ": interrupted");
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException(String.join(" ", cmd) + ": " + e, e);
    }
  }

  /** Stops the server and removes its data. */
  @Override
  public void close() throws IOException {
    stop(process);
    deleteTree(dataDir);
  }

  /** Stops {@code p}: SIGTERM, then SIGKILL if it has not exited after 10 s. */
  static void stop(Process p) {
    p.destroy();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** The strata binary named by {@value #BINARY_PROPERTY}, checked to be executable. */
  static Path binary() {
    return executable(BINARY_PROPERTY, "strata", "build it first with `make build` (go build "
        + "-o bin/strata ./cmd/strata) at the repository root");
  }

  /**
   * The {@code what} binary named by system property {@code property}, checked to be
   * executable; else an IllegalStateException saying how to {@code build} it.
   */
  static Path executable(String property, String what, String build) {
    String prop = System.getProperty(property);
    if (prop == null || prop.isEmpty()) {
      throw new IllegalStateException("system property " + property + " is not set: run "
          + "the tests through Maven (java/pom.xml sets it) or pass -D" + property + "=/path/to/"
          + what);
    }
    Path b = Paths.get(prop).toAbsolutePath().normalize();
    if (!Files.isExecutable(b)) {
      throw new IllegalStateException("the " + what + " binary " + b + " (from -D" + property
          + ") does not exist or is not executable: " + build);
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
