package io.strata.hadoop.contract.cache;

import io.strata.hadoop.StrataConfigKeys;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * Hadoop's VectoredRead contract suite in cache-mode namespaces over 4 KiB blocks (its dataset
 * spans 32 ranges of its object): once per buffer type and backend.
 */
public class TestCacheContractVectoredReadSmallBlocks extends TestCacheContractVectoredRead {
  /** {@code param} is "bufferType backend", one of {@link #params}. */
  public TestCacheContractVectoredReadSmallBlocks(String param) {
    super(param);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    conf.set(StrataConfigKeys.BLOCK_SIZE, "4k");
    return super.createContract(conf);
  }
}
