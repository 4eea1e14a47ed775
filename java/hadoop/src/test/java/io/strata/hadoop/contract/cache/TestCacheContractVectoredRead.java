package io.strata.hadoop.contract.cache;

import io.strata.core.testing.CacheLakes;
import io.strata.hadoop.contract.StrataContract;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;
import org.junit.runners.Parameterized;

/**
 * Hadoop's VectoredRead contract suite in cache-mode namespaces, over a local directory and
 * MinIO: once per buffer type and backend.
 */
public class TestCacheContractVectoredRead extends AbstractContractVectoredReadTest {
  @ClassRule public static final CacheLakes LAKES = CacheLakes.all();

  private final String backend;

  /** {@code param} is "bufferType backend", one of {@link #params}. */
  public TestCacheContractVectoredRead(String param) {
    super(param.split(" ")[0]);
    this.backend = param.split(" ")[1];
  }

  /** NB: hides the suite's own parameters (buffer types), to add the backends. */
  @Parameterized.Parameters(name = "{0}")
  public static List<String> params() {
    List<String> out = new ArrayList<>();
    for (String backend : CacheLakes.BACKENDS) {
      for (String buffer : AbstractContractVectoredReadTest.params()) {
        out.add(buffer + " " + backend);
      }
    }
    return out;
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return StrataContract.cache(conf, LAKES, backend);
  }
}
