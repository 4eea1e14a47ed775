package io.strata.hadoop.contract.cache;

import io.strata.hadoop.StrataConfigKeys;
import io.strata.hadoop.contract.StrataContract;
import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.junit.Test;

/**
 * Hadoop's Seek contract suite in cache-mode namespaces with 4 KiB blocks and a 1000-byte read
 * buffer: each file is read as many ranges of one version of its object, so that every seek and
 * read meets range and buffer boundaries.
 */
public class TestCacheContractSeekSmallBlocks extends TestCacheContractSeek {
  /** Run once per backend. */
  public TestCacheContractSeekSmallBlocks(String backend) {
    super(backend);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    conf.set(StrataConfigKeys.BLOCK_SIZE, "4k");
    conf.set(StrataConfigKeys.READ_BUFFER, "1000");
    return super.createContract(conf);
  }

  @Test
  public void theDatasetsSpanManyBlocks() throws IOException {
    StrataContract.assertSpansBlocks(getFileSystem(), path("spans"));
  }
}
