package io.strata.hadoop.contract;

import io.strata.core.testing.DevClusterRule;
import io.strata.hadoop.StrataConfigKeys;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractSeekTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * Hadoop's Seek contract suite on strata:// with 4 KiB blocks and a 1000-byte read buffer, so
 * that its datasets (up to 100 KiB) span many blocks and every seek and read meets block and
 * buffer boundaries.
 */
public class TestStrataContractSeekSmallBlocks extends AbstractContractSeekTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    conf.set(StrataConfigKeys.BLOCK_SIZE, "4k");
    conf.set(StrataConfigKeys.READ_BUFFER, "1000");
    return new StrataContract(conf, SERVER.address());
  }

  @Test
  public void theDatasetsSpanManyBlocks() throws IOException {
    StrataContract.assertSpansBlocks(getFileSystem(), path("spans"));
  }
}
