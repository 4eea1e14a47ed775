package io.strata.core.testing;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real MinIO server on loopback with a fresh data directory, as the Go tests' miniotest runs
 * it: the S3-compatible bucket of cache-mode tests. The binary comes from the system property
 * {@value #BINARY_PROPERTY} (Maven sets it from {@code STRATA_MINIO}, else the project's
 * .cache/bin/minio that {@code make minio} builds); a missing binary fails the test with a message
 * saying how to build it, never skips it. Its output is kept in target/strata-logs/.
 *
 * <p>The buckets are made before MinIO starts, as directories of its data directory, which
 * MinIO (single drive) takes as buckets: the tests need no S3 client of their own for that.
 */
public final class MinioServer implements AutoCloseable {
  /** System property naming the minio binary. */
  public static final String BINARY_PROPERTY = "strata.minio";
  /** The root credentials (MinIO wants a password of 8 or more characters), as miniotest's. */
  public static final String ACCESS_KEY = "strata-test";
  public static final String SECRET_KEY = "strata-test-secret";
  /** The region S3 clients are told. */
  public static final String REGION = "us-east-1";

  private static final long READY_TIMEOUT_MS = 60_000;
  private static final int START_TRIES = 3;

  private final Process process;
  private final Path dir;
  private final String endpoint;

  private MinioServer(Process process, Path dir, String endpoint) {
    this.process = process;
    this.dir = dir;
    this.endpoint = endpoint;
  }

  /** Starts MinIO with the (empty) buckets {@code buckets} and waits until it is live. */
  public static MinioServer start(String... buckets) throws IOException {
    IOException last = null;
    for (int i = 0; i < START_TRIES; i++) {
      try {
        return startOnce(buckets);
      } catch (IOException e) {
        last = e; // a free port can be taken before MinIO binds it
      }
    }
    throw last;
  }

  private static MinioServer startOnce(String[] buckets) throws IOException {
    Path binary = binary();
    Path dir = Files.createTempDirectory("strata-minio-");
    for (String b : buckets) {
      Files.createDirectories(dir.resolve("data").resolve(b));
    }
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path log = Files.createTempFile(logDir, "minio-", ".log");
    String addr = "127.0.0.1:" + freePort();
    String console = "127.0.0.1:" + freePort();
    ProcessBuilder pb = new ProcessBuilder(binary.toString(), "server", "--quiet", "--address",
        addr, "--console-address", console, "--certs-dir", dir.resolve("certs").toString(),
        dir.resolve("data").toString())
        .redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().putAll(Map.of("MINIO_ROOT_USER", ACCESS_KEY, "MINIO_ROOT_PASSWORD",
        SECRET_KEY, "MINIO_BROWSER", "off", "MINIO_UPDATE", "off"));
    Process p = pb.start();
    MinioServer m = new MinioServer(p, dir, "http://" + addr);
    try {
      m.waitLive();
      return m;
    } catch (IOException e) {
      m.close();
      throw new IOException(e.getMessage() + "; its log: " + log + "\n" + Files.readString(log),
          e);
    }
  }

  /** The S3 endpoint, http://127.0.0.1:PORT. */
  public String endpoint() {
    return endpoint;
  }

  /**
   * The credentials as environment variables, for a process (the Strata server and its worker)
   * that reaches the buckets.
   */
  public static Map<String, String> credentials() {
    return Map.of("AWS_ACCESS_KEY_ID", ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", SECRET_KEY,
        "AWS_REGION", REGION);
  }

  /** A Strata store URI of {@code prefix} in {@code bucket}. */
  public String storeUri(String bucket, String prefix) {
    return "s3://" + bucket + "/" + prefix + "?endpoint=" + endpoint + "&region=" + REGION;
  }

  /**
   * Waits until MinIO answers its cluster health check. NB: not the liveness one, which answers
   * 200 before MinIO's object layer, bucket metadata and IAM are up: a request then gets 503
   * XMinioServerNotInitialized (seen on a loaded machine).
   */
  private void waitLive() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    URI health = URI.create(endpoint + "/minio/health/cluster");
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException("minio exited during startup with status " + process.exitValue());
      }
      try {
        HttpURLConnection c = (HttpURLConnection) health.toURL().openConnection();
        c.setConnectTimeout(1000);
        c.setReadTimeout(1000);
        int code = c.getResponseCode();
        c.disconnect();
        if (code == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      try {
        process.waitFor(25, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("waiting for minio");
      }
    }
    throw new IOException("minio not live after " + READY_TIMEOUT_MS + " ms");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The minio binary named by {@value #BINARY_PROPERTY}, checked to be executable. */
  static Path binary() {
    return DevCluster.executable(BINARY_PROPERTY, "minio", "build it with `make minio` at the "
        + "repository root, or set STRATA_MINIO to a minio binary");
  }

  /** Stops MinIO (SIGTERM, then SIGKILL after 10 s) and removes its data. */
  @Override
  public void close() throws IOException {
    DevCluster.stop(process);
    DevCluster.deleteTree(dir);
  }
}
