package io.strata.hadoop.contract;

import io.strata.hadoop.StrataConfigKeys;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * The FileSystem contract of strata://, for Hadoop's contract suites: the options in
 * contract/strata.xml state what Strata supports, and the file system is a fresh instance
 * (never the FileSystem cache, whose key ignores the service address) on a running dev server.
 */
public class StrataContract extends AbstractFSContract {
  /** The options resource. */
  public static final String CONTRACT_XML = "contract/strata.xml";

  /** The namespace the suites run in. */
  public static final URI FS_URI = URI.create("strata://default/");

  private final String address;
  private FileSystem fs;

  /** A contract for the service at {@code address}. */
  public StrataContract(Configuration conf, String address) {
    super(conf);
    this.address = address;
    addConfResource(CONTRACT_XML);
  }

  @Override
  public void init() throws IOException {
    super.init();
    getConf().set(StrataConfigKeys.META_ADDRESS, address);
    fs = FileSystem.newInstance(FS_URI, getConf());
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
