package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractAppendTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/** Hadoop's Append contract suite on strata://. */
public class TestStrataContractAppend extends AbstractContractAppendTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf, SERVER.address());
  }
}
