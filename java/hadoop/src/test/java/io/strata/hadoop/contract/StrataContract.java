package io.strata.hadoop.contract;

import io.strata.core.testing.CacheLakes;
import io.strata.core.testing.DevCluster;
import io.strata.hadoop.StrataConfigKeys;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.fs.contract.ContractTestUtils;

/**
 * The FileSystem contract of strata://, for Hadoop's contract suites: the options in
 * contract/strata.xml state what Strata supports in a block-mode namespace, those in
 * contract/strata-cache.xml what it supports in a cache-mode one (object-store semantics, as
 * S3A's contract/s3a.xml), and the file system is a fresh instance (never the FileSystem cache,
 * whose key ignores the service address) on a running dev server.
 */
public class StrataContract extends AbstractFSContract {
  /** The options resource of block mode. */
  public static final String CONTRACT_XML = "contract/strata.xml";
  /** The options resource of cache mode. */
  public static final String CACHE_CONTRACT_XML = "contract/strata-cache.xml";

  /** The namespace the block-mode suites run in. */
  public static final URI FS_URI = URI.create("strata://default/");

  private final String address;
  private final URI uri;
  private FileSystem fs;

  /** A contract for the block-mode namespace "default" of the service at {@code address}. */
  public StrataContract(Configuration conf, String address) {
    this(conf, address, FS_URI, CONTRACT_XML);
  }

  /**
   * A contract for the namespace at {@code uri} of the service at {@code address}, whose options
   * are in resource {@code xml}.
   */
  public StrataContract(Configuration conf, String address, URI uri, String xml) {
    super(conf);
    this.address = address;
    this.uri = uri;
    addConfResource(xml);
  }

  /** A contract for the cache-mode namespace of {@code backend} ({@link CacheLakes}). */
  public static StrataContract cache(Configuration conf, CacheLakes lakes, String backend) {
    return new StrataContract(conf, lakes.address(), URI.create(CacheLakes.uri(backend)),
        CACHE_CONTRACT_XML);
  }

  /**
   * Asserts that a 10,000-byte file written at {@code f} (with 4 KiB blocks configured) has 3
   * blocks: the small-block suites' datasets do span blocks.
   */
  public static void assertSpansBlocks(FileSystem fs, Path f) throws IOException {
    ContractTestUtils.createFile(fs, f, true, ContractTestUtils.dataset(10_000, 0, 255));
    org.junit.Assert.assertEquals(3, fs.getFileBlockLocations(f, 0, 10_000).length);
  }

  @Override
  public void init() throws IOException {
    super.init();
    getConf().set(StrataConfigKeys.META_ADDRESS, address);
    getConf().set(StrataConfigKeys.TOKEN, DevCluster.tokenOf(address));
    fs = FileSystem.newInstance(uri, getConf());
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
