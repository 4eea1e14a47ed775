package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import io.strata.hadoop.StrataConfigKeys;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/**
 * Hadoop's VectoredRead contract suite on strata:// with 4 KiB blocks, so that its 128 KiB
 * dataset spans 32 blocks and its ranges cross block boundaries.
 */
public class TestStrataContractVectoredReadSmallBlocks extends AbstractContractVectoredReadTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  /** Run once per buffer type (the suite is parameterized). */
  public TestStrataContractVectoredReadSmallBlocks(String bufferType) {
    super(bufferType);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    conf.set(StrataConfigKeys.BLOCK_SIZE, "4k");
    return new StrataContract(conf, SERVER.address());
  }
}
