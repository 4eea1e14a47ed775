package io.strata.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.rules.ExternalResource;

/**
 * A JUnit 4 rule (use it as a {@code @ClassRule}) that runs a real {@code strata server --dev}
 * with cache-mode namespaces (docs/cachemode.md) over real buckets:
 *
 * <ul>
 *   <li>{@value #LOCAL}: namespace {@code lake} over a local directory ({@code file:///dir}, an
 *       object a plain file), sync interval 0: every access checks the bucket;
 *   <li>{@value #MINIO}: namespace {@code s3lake} over the prefix {@code lake/} of a bucket of a
 *       real MinIO ({@link MinioServer}), sync interval -1: what was loaded is trusted for ever,
 *       so that the suites also run on what the service holds rather than on fresh lookups.
 * </ul>
 *
 * {@link #local} runs the first only (no MinIO).
 */
public final class CacheLakes extends ExternalResource {
  /** The backend names, for parameterized tests. */
  public static final String LOCAL = "local";
  public static final String MINIO = "minio";
  public static final List<String> BACKENDS = List.of(LOCAL, MINIO);

  private static final String BUCKET = "strata-test";

  private final boolean minio;
  private MinioServer server;
  private DevCluster cluster;
  private Path bucketDir;
  private final List<Path> extraDirs = new java.util.ArrayList<>();

  private CacheLakes(boolean minio) {
    this.minio = minio;
  }

  /** Both namespaces. */
  public static CacheLakes all() {
    return new CacheLakes(true);
  }

  /** The local-directory namespace only. */
  public static CacheLakes local() {
    return new CacheLakes(false);
  }

  @Override
  protected void before() throws Throwable {
    bucketDir = Files.createTempDirectory("strata-lake-");
    if (minio) {
      server = MinioServer.start(BUCKET);
      cluster = DevCluster.start(MinioServer.credentials());
      cluster.admin("ns", "create", namespace(MINIO), "--mode", "cache", "--sync-interval", "-1",
          "--store", server.storeUri(BUCKET, "lake"));
    } else {
      cluster = DevCluster.start();
    }
    cluster.admin("ns", "create", namespace(LOCAL), "--mode", "cache", "--sync-interval", "0",
        "--store", "file://" + bucketDir);
  }

  @Override
  protected void after() {
    try {
      if (cluster != null) {
        cluster.close();
      }
      if (server != null) {
        server.close();
      }
      DevCluster.deleteTree(bucketDir);
      for (Path d : extraDirs) {
        DevCluster.deleteTree(d);
      }
      extraDirs.clear();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      server = null;
      cluster = null;
    }
  }

  /** The namespace of {@code backend}. */
  public static String namespace(String backend) {
    switch (backend) {
      case LOCAL:
        return "lake";
      case MINIO:
        return "s3lake";
      default:
        throw new IllegalArgumentException("no cache-mode backend " + backend);
    }
  }

  /** The {@code strata://} URI of {@code backend}'s namespace. */
  public static String uri(String backend) {
    return "strata://" + namespace(backend) + "/";
  }

  /** The running server. */
  public DevCluster cluster() {
    if (cluster == null) {
      throw new IllegalStateException("the cache lakes are not running (use the rule as a "
          + "@ClassRule)");
    }
    return cluster;
  }

  /** The host:port of the running server. */
  public String address() {
    return cluster().address();
  }

  /** The superuser's token of the running server. */
  public String token() throws IOException {
    return cluster().token();
  }

  /**
   * Creates one more cache-mode namespace {@code name} over a new local directory, with sync
   * interval {@code syncInterval} seconds, and returns the directory (removed with the rest).
   */
  public Path localNamespace(String name, long syncInterval) throws IOException {
    Path dir = Files.createDirectory(bucketDir.resolveSibling(bucketDir.getFileName() + "-"
        + name));
    extraDirs.add(dir);
    cluster().admin("ns", "create", name, "--mode", "cache", "--sync-interval",
        Long.toString(syncInterval), "--store", "file://" + dir);
    return dir;
  }

  /** The directory that is {@value #LOCAL}'s bucket: its files are the namespace's objects. */
  public Path bucketDir() {
    return bucketDir;
  }
}
