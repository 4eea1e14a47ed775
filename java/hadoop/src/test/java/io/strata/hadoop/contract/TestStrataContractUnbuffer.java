package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractUnbufferTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's Unbuffer contract suite on strata:// (CanUnbuffer drops the read buffer). */
public class TestStrataContractUnbuffer extends AbstractContractUnbufferTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf, SERVER.address());
  }
}
