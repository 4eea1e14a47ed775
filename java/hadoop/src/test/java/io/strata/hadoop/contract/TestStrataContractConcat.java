package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractConcatTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/**
 * Hadoop's Concat contract suite on strata://: concat moves blocks (small files are made blocks
 * first, by the service).
 */
public class TestStrataContractConcat extends AbstractContractConcatTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new StrataContract(conf, SERVER.address());
  }
}
