package io.strata.hadoop.contract.cache;

import io.strata.core.testing.CacheLakes;
import io.strata.hadoop.contract.StrataContract;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;

/** Hadoop's Create contract suite in cache-mode namespaces, over a local directory and MinIO. */
@RunWith(Parameterized.class)
public class TestCacheContractCreate extends AbstractContractCreateTest {
  @ClassRule public static final CacheLakes LAKES = CacheLakes.all();

  private final String backend;

  /** Run once per backend. */
  public TestCacheContractCreate(String backend) {
    this.backend = backend;
  }

  @Parameterized.Parameters(name = "{0}")
  public static List<String> backends() {
    return CacheLakes.BACKENDS;
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return StrataContract.cache(conf, LAKES, backend);
  }
}
