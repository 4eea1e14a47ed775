package io.strata.core.testing;

import org.junit.rules.ExternalResource;

/**
 * A JUnit 4 rule around {@link DevCluster}: use it as a {@code @ClassRule} to run one server for
 * a test class.
 */
public final class DevClusterRule extends ExternalResource {
  private DevCluster cluster;

  @Override
  protected void before() throws Throwable {
    cluster = DevCluster.start();
  }

  @Override
  protected void after() {
    if (cluster != null) {
      try {
        cluster.close();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      cluster = null;
    }
  }

  /** The running server. */
  public DevCluster cluster() {
    if (cluster == null) {
      throw new IllegalStateException("the dev cluster is not running (use the rule as a "
          + "@ClassRule or @Rule)");
    }
    return cluster;
  }

  /** The host:port of the running server. */
  public String address() {
    return cluster().address();
  }

  /** The superuser's token of the running server. */
  public String token() throws java.io.IOException {
    return cluster().token();
  }

  /** A client configuration of the running server with the superuser's token. */
  public io.strata.core.ClientConfig.Builder clientConfig() {
    return cluster().clientConfig();
  }
}
