package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractVectoredReadTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's VectoredRead contract suite on strata://. */
public class TestStrataContractVectoredRead extends AbstractContractVectoredReadTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  /** Run once per buffer type (the suite is parameterized). */
  public TestStrataContractVectoredRead(String bufferType) {
    super(bufferType);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf, SERVER.address());
  }
}
