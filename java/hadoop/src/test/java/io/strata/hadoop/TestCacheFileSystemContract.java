package io.strata.hadoop;

import io.strata.core.testing.CacheLakes;
import java.net.URI;
import java.util.List;
import org.junit.ClassRule;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/**
 * Hadoop's older FileSystem contract suite in cache-mode namespaces, over a local directory and
 * MinIO, as hadoop-aws runs it on S3A (ITestS3AFileSystemContract).
 */
@RunWith(Parameterized.class)
public class TestCacheFileSystemContract extends StrataFileSystemContractBase {
  @ClassRule public static final CacheLakes LAKES = CacheLakes.all();

  private final String backend;

  /** Run once per backend. */
  public TestCacheFileSystemContract(String backend) {
    this.backend = backend;
  }

  @Parameterized.Parameters(name = "{0}")
  public static List<String> backends() {
    return CacheLakes.BACKENDS;
  }

  @Override
  protected String address() {
    return LAKES.address();
  }

  @Override
  protected URI uri() {
    return URI.create(CacheLakes.uri(backend));
  }
}
