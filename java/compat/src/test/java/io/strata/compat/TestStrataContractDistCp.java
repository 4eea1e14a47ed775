package io.strata.compat;

import io.strata.core.testing.DevClusterRule;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.tools.contract.AbstractContractDistCpTest;
import org.junit.ClassRule;

/**
 * Hadoop's DistCp contract suite (hadoop-distcp's test jar) on strata://, through the shaded jar:
 * deep trees and large files from the local file system into Strata and back, {@code -update}
 * after changes, direct writes, the iterator listing, on the local job runner.
 */
public class TestStrataContractDistCp extends AbstractContractDistCpTest {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  /**
   * DistCp opens its file systems through Hadoop's FileSystem cache, whose key (scheme,
   * authority, user) does not hold the service's address: a strata:// client another test class
   * of this JVM cached would reach that class's server, gone. So no cache for strata://.
   */
  @Override
  protected Configuration createConfiguration() {
    Configuration conf = super.createConfiguration();
    conf.setBoolean("fs.strata.impl.disable.cache", true);
    return conf;
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    try {
      return new Contract(conf, SERVER.address(), SERVER.token());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The block-mode namespace "default" of the dev server, a fresh FileSystem per test. */
  static final class Contract extends AbstractFSContract {
    private final String address;
    private final String token;
    private FileSystem fs;

    Contract(Configuration conf, String address, String token) {
      super(conf);
      this.address = address;
      this.token = token;
    }

    @Override
    public void init() throws IOException {
      super.init();
      getConf().set("fs.strata.meta.address", address);
      getConf().set("fs.strata.token", token);
      fs = FileSystem.newInstance(URI.create("strata://default/"), getConf());
    }

    @Override
    public void teardown() throws IOException {
      if (fs != null) {
        fs.close();
        fs = null;
      }
      super.teardown();
    }

    @Override
    public FileSystem getTestFileSystem() {
      return fs;
    }

    @Override
    public String getScheme() {
      return "strata";
    }

    @Override
    public Path getTestPath() {
      return new Path("/test");
    }
  }
}
