package io.strata.hbase;

import io.strata.hbase.wal.StrataLogWriter;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.util.CommonFSUtils;
import org.apache.hadoop.hbase.wal.AsyncFSWALProvider;

/**
 * An HBase cluster in this JVM on any Hadoop file system: HBase's own mini cluster
 * (HBaseTestingUtility: a ZooKeeper, one master, region servers), with its root directory and its
 * write-ahead logs ({@code hbase.rootdir}, {@code hbase.wal.dir}, two separate directories) on
 * the file system {@code fs.defaultFS} names, e.g. {@code strata://default/}. Nothing of HBase's
 * safety is turned off: the log's streams must declare hflush and hsync
 * ({@code hbase.unsafe.stream.capability.enforce} stays true). On Strata the log's writer is
 * {@link StrataLogWriter}, as a region server on Strata is configured, unless the caller names
 * another ({@code hbase.regionserver.wal.async.writer.impl}).
 *
 * <p>Each region server has FileSystem instances, and so clients, of its own (HBase's mini
 * cluster does it for HDFS, {@link OwnFsRegionServer} for the others): a killed region server
 * closes its own, and its open files are left to lease recovery, as a dead process's would be.
 */
public final class MiniHBase implements AutoCloseable {
  /**
   * HBase's check that the log's streams declare hflush and hsync (CommonFSUtils), true unless
   * set otherwise.
   */
  public static final String ENFORCE_CAPABILITIES = "hbase.unsafe.stream.capability.enforce";

  private final HBaseTestingUtility util;
  private final StartMiniClusterOption option;

  private MiniHBase(HBaseTestingUtility util, StartMiniClusterOption option) {
    this.util = util;
    this.option = option;
  }

  /**
   * Starts ZooKeeper and HBase with {@code regionServers} region servers on {@code conf}'s
   * default file system; settings already in {@code conf} win over the small cluster's below.
   */
  public static MiniHBase start(Configuration conf, int regionServers) throws Exception {
    Configuration c = new Configuration(conf);
    setIfUnset(c, "hbase.master.info.port", "-1");
    setIfUnset(c, "hbase.regionserver.info.port", "-1");
    setIfUnset(c, "hbase.regionserver.handler.count", "16");
    setIfUnset(c, "hbase.master.handler.count", "8");
    if (StrataLogWriter.SCHEME.equals(FileSystem.getDefaultUri(conf).getScheme())) {
      // The log's writer a region server on Strata is configured with (docs/java.md, "HBase").
      setIfUnset(c, AsyncFSWALProvider.WRITER_IMPL, StrataLogWriter.class.getName());
    }
    HBaseTestingUtility util = new HBaseTestingUtility(c);
    // NB: the utility takes file:/// as the default file system until it starts an HDFS of its
    // own; the directories go where the caller said instead.
    util.getConfiguration().set(FileSystem.FS_DEFAULT_NAME_KEY,
        conf.get(FileSystem.FS_DEFAULT_NAME_KEY));
    // NB: it also turns the log's hflush/hsync check off (a local file system has neither),
    // and on again only when it starts an HDFS: on again, unless the caller said otherwise.
    util.getConfiguration().setBoolean(ENFORCE_CAPABILITIES,
        conf.getBoolean(ENFORCE_CAPABILITIES, true));
    StartMiniClusterOption.Builder b = StartMiniClusterOption.builder().numMasters(1)
        .numRegionServers(regionServers).createRootDir(true).createWALDir(true);
    if (!"hdfs".equals(FileSystem.getDefaultUri(conf).getScheme())) {
      b.rsClass(OwnFsRegionServer.class);
    }
    StartMiniClusterOption option = b.build();
    util.startMiniZKCluster();
    try {
      util.startMiniHBaseCluster(option);
    } catch (Exception | Error e) {
      util.shutdownMiniZKCluster();
      throw e;
    }
    return new MiniHBase(util, option);
  }

  private static void setIfUnset(Configuration c, String key, String value) {
    if (c.get(key) == null) {
      c.set(key, value);
    }
  }

  /** The cluster's configuration, as its clients take it. */
  public Configuration conf() {
    return util.getConfiguration();
  }

  /** A connection shared by the callers (closed with the cluster). */
  public Connection connection() throws IOException {
    return util.getConnection();
  }

  /** An admin of the shared connection. */
  public Admin admin() throws IOException {
    return util.getAdmin();
  }

  /** {@code hbase.rootdir}. */
  public Path rootDir() throws IOException {
    return CommonFSUtils.getRootDir(conf());
  }

  /** {@code hbase.wal.dir}: the region servers' write-ahead logs are below it. */
  public Path walDir() throws IOException {
    return CommonFSUtils.getWALRootDir(conf());
  }

  /** The file system of the root directory. */
  public FileSystem fileSystem() throws IOException {
    return rootDir().getFileSystem(conf());
  }

  /** The live region servers. */
  public List<ServerName> regionServers() throws IOException {
    return List.copyOf(admin().getRegionServers());
  }

  /**
   * Kills region server {@code rs} (an abort: no flush, its log left as it is) and waits until
   * it has stopped; the master then splits its logs and assigns its regions elsewhere.
   */
  public void killRegionServer(ServerName rs) throws IOException {
    util.getMiniHBaseCluster().killRegionServer(rs);
    util.getMiniHBaseCluster().waitForRegionServerToStop(rs, Duration.ofMinutes(2).toMillis());
  }

  /** Starts one more region server. */
  public void startRegionServer() throws IOException {
    util.getMiniHBaseCluster().startRegionServer();
  }

  /**
   * Waits until every region of {@code table} (as hbase:meta lists them, split parents left out)
   * is online on a live region server and none is in transition; at most {@link #ONLINE_WAIT}.
   * (HBaseTestingUtility's own waits count split parents, or take a dead server's regions for
   * online.)
   */
  public void awaitOnline(TableName table) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + ONLINE_WAIT.toNanos();
    while (!online(table)) {
      if (System.nanoTime() > deadline) {
        throw new IOException("the regions of " + table + " were not online within "
            + ONLINE_WAIT);
      }
      Thread.sleep(50); // polling: HBase tells of assignments only so
    }
  }

  /** How long {@link #awaitOnline} waits. */
  public static final Duration ONLINE_WAIT = Duration.ofMinutes(5);

  private boolean online(TableName table) throws IOException {
    Admin admin = admin();
    if (!admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.REGIONS_IN_TRANSITION))
        .getRegionStatesInTransition().isEmpty()) {
      return false;
    }
    Set<String> open = new HashSet<>();
    for (ServerName sn : admin.getRegionServers()) {
      try {
        for (RegionInfo r : admin.getRegions(sn)) {
          open.add(r.getEncodedName());
        }
      } catch (IOException e) {
        return false; // a server that just died or has not started serving
      }
    }
    for (RegionInfo r : admin.getRegions(table)) {
      if (!open.contains(r.getEncodedName())) {
        return false;
      }
    }
    return true;
  }

  /**
   * Stops HBase (ZooKeeper stays) and starts it again on the same directories, then waits
   * until every region of {@code tables} is online again.
   */
  public void restart(TableName... tables) throws IOException, InterruptedException {
    util.shutdownMiniHBaseCluster();
    util.restartHBaseCluster(option);
    for (TableName t : tables) {
      awaitOnline(t);
    }
  }

  /** Stops HBase and ZooKeeper; the directories on the file system stay. */
  @Override
  public void close() throws IOException {
    try {
      util.shutdownMiniHBaseCluster();
    } finally {
      util.shutdownMiniZKCluster();
    }
  }
}
