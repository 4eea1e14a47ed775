package io.strata.compat;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * An HDFS (MiniDFSCluster: one NameNode, one DataNode, in this JVM) and a Strata service, and
 * the one Hadoop configuration that reaches both, as a job moving data between them has it:
 * HDFS asked for checksums in the {@code COMPOSITE_CRC} form, which Strata's equal for the same
 * bytes (docs/semantics.md, "Checksums"), and MapReduce on the local job runner with its staging
 * directory on the local file system.
 */
public final class Sides implements AutoCloseable {
  /** HDFS's key for the form of its checksums, and the form Strata's equal. */
  public static final String COMBINE_MODE = "dfs.checksum.combine.mode";

  private final MiniDFSCluster hdfs;
  private final Configuration conf;

  private Sides(MiniDFSCluster hdfs, Configuration conf) {
    this.hdfs = hdfs;
    this.conf = conf;
  }

  /**
   * Starts HDFS with its storage under {@code base} (blocks of {@code blockSize} bytes), and
   * configures a client of it and of the Strata service at {@code strataAddress} with {@code
   * token}.
   */
  public static Sides start(File base, long blockSize, String strataAddress, String token)
      throws IOException {
    Configuration hconf = new HdfsConfiguration();
    hconf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
    hconf.setInt("dfs.replication", 1);
    hconf.setLong("dfs.namenode.fs-limits.min-block-size", 0);
    hconf.setLong("dfs.blocksize", blockSize);
    hconf.setBoolean("dfs.permissions.enabled", true);
    MiniDFSCluster hdfs = new MiniDFSCluster.Builder(hconf, base).numDataNodes(1).build();
    hdfs.waitActive();

    Configuration conf = new Configuration(hdfs.getConfiguration(0));
    conf.set(COMBINE_MODE, "COMPOSITE_CRC");
    conf.set("fs.strata.meta.address", strataAddress);
    conf.set("fs.strata.token", token);
    conf.set("fs.defaultFS", "file:///");
    conf.set("mapreduce.framework.name", "local");
    File staging = new File(base, "staging");
    conf.set("mapreduce.jobtracker.staging.root.dir", staging.toURI().toString());
    conf.set("yarn.app.mapreduce.am.staging-dir", staging.toURI().toString());
    conf.set("mapreduce.cluster.local.dir", new File(base, "mapred-local").getPath());
    conf.set("hadoop.tmp.dir", new File(base, "tmp").getPath());
    return new Sides(hdfs, conf);
  }

  /** The configuration of both sides (a copy the caller may change). */
  public Configuration conf() {
    return new Configuration(conf);
  }

  /** The root of the HDFS, {@code hdfs://host:port/}. */
  public URI hdfsUri() {
    return hdfs.getURI();
  }

  /** A new HDFS client of {@code conf} (its own instance, closed by the caller). */
  public FileSystem hdfs(Configuration c) throws IOException {
    return FileSystem.newInstance(hdfsUri(), c);
  }

  /** A new Strata client of {@code conf}, in namespace {@code default}. */
  public FileSystem strata(Configuration c) throws IOException {
    return FileSystem.newInstance(URI.create("strata://default/"), c);
  }

  /** Shuts HDFS down. */
  @Override
  public void close() {
    hdfs.shutdown();
  }
}
