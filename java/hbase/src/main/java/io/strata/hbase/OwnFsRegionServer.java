package io.strata.hbase;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.MiniHBaseCluster;

/**
 * A mini cluster's region server with FileSystem instances (so Strata clients) of its own, as a
 * region server process has. NB: HBase's mini cluster gives each region server a user of its
 * own, and so its own FileSystem from Hadoop's cache, for HDFS only; on another file system
 * every server shares the master's instance, and a killed region server, which closes its file
 * system on the way out, would close the master's. This server's file systems are uncached
 * instead ({@code fs.SCHEME.impl.disable.cache} in its own configuration).
 */
public class OwnFsRegionServer extends MiniHBaseCluster.MiniHBaseClusterRegionServer {
  /** Called by the mini cluster, with the cluster's configuration. */
  public OwnFsRegionServer(Configuration conf) throws IOException, InterruptedException {
    super(ownFileSystems(conf));
  }

  private static Configuration ownFileSystems(Configuration conf) {
    Configuration c = new Configuration(conf);
    c.setBoolean("fs." + FileSystem.getDefaultUri(conf).getScheme() + ".impl.disable.cache",
        true);
    return c;
  }
}
