package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractCreateTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;

/**
 * Hadoop's Create contract suite on strata:// with deferred creates (contract/strata-deferred.xml
 * over contract/strata.xml): the one difference is that a new file becomes visible at close (or
 * at hflush, or once written past the inline limit).
 */
public class TestStrataContractCreateDeferred extends AbstractContractCreateTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    StrataContract c = new StrataContract(conf, SERVER.address());
    c.getConf().addResource("contract/strata-deferred.xml");
    return c;
  }
}
