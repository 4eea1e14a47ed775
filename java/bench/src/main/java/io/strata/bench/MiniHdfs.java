package io.strata.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS to benchmark against: MiniDFSCluster with one NameNode and one DataNode in this
 * JVM, their storage under a base directory on local disk. Prints the hdfs:// URI on stdout once
 * the cluster is up, then runs until SIGTERM/SIGINT, until stdin ends ({@code --stdin}), or until
 * the process {@code --exit-with PID} ends, and shuts the cluster down.
 *
 * <pre>
 * java -cp ... io.strata.bench.MiniHdfs --base-dir DIR [--handlers 64] [--exit-with PID]
 *     [--stdin] [--conf key=value]...
 * </pre>
 *
 * Unlike MiniDFSCluster's defaults, which suit unit tests, the NameNode fsyncs its edit log as a
 * real one does (skipFsyncForTesting false), keeps it in one directory (a real NameNode often
 * writes two), and runs {@code --handlers} RPC handlers (default 64, as many as the benchmark's
 * threads; HDFS's default is 10), so that it can batch that many edits into one sync; and
 * num-committed-allowed 1 (moot at replication 1, see start). Replication is 1 (one DataNode). Each choice favours HDFS; {@code --conf} overrides them.
 */
public final class MiniHdfs {
  private MiniHdfs() {}

  public static void main(String[] args) throws Exception {
    String base = null;
    int handlers = 64;
    long exitWith = -1;
    boolean stdin = false;
    Map<String, String> overrides = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--base-dir" -> base = args[++i];
        case "--handlers" -> handlers = Integer.parseInt(args[++i]);
        case "--exit-with" -> exitWith = Long.parseLong(args[++i]);
        case "--stdin" -> stdin = true;
        case "--conf" -> {
          String kv = args[++i];
          int eq = kv.indexOf('=');
          overrides.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        default -> {
          System.err.println("usage: MiniHdfs --base-dir DIR [--handlers N] [--exit-with PID]"
              + " [--stdin] [--conf key=value]");
          System.exit(2);
        }
      }
    }
    if (base == null) {
      System.err.println("minihdfs: --base-dir is required");
      System.exit(2);
    }
    MiniDFSCluster cluster = start(new File(base).getAbsoluteFile(), handlers, overrides);
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      System.err.println("minihdfs: shutting down");
      cluster.shutdown();
      stop.countDown();
    }));
    System.out.println(cluster.getURI());
    System.out.flush();
    System.err.println("minihdfs: serving " + cluster.getURI() + " (replication "
        + cluster.getConfiguration(0).get("dfs.replication") + ", handlers "
        + cluster.getConfiguration(0).get("dfs.namenode.handler.count") + ")");
    if (exitWith > 0) {
      ProcessHandle.of(exitWith).ifPresentOrElse(
          ph -> ph.onExit().thenRun(() -> System.exit(0)), () -> System.exit(0));
    }
    if (stdin) {
      drain(System.in);
      System.exit(0);
    }
    stop.await();
  }

  /** Starts the cluster; {@code overrides} are set last, over this class's choices. */
  static MiniDFSCluster start(File base, int handlers, Map<String, String> overrides)
      throws IOException {
    // NB: hdfs-default.xml defines every key below, so setIfUnset would change nothing.
    Configuration conf = new HdfsConfiguration();
    File name = new File(base, "name");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getPath());
    conf.set("dfs.namenode.name.dir", name.toURI().toString());
    conf.set("dfs.namenode.edits.dir", name.toURI().toString());
    conf.setInt("dfs.replication", 1);
    conf.setInt("dfs.namenode.handler.count", handlers);
    // A file's close need not wait for the DataNode's block report (HDFS-8999). NB: HDFS allows
    // that only for blocks with more expected replicas than the minimum, so not at replication 1.
    conf.setInt("dfs.namenode.file.close.num-committed-allowed", 1);
    overrides.forEach(conf::set);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, base)
        .numDataNodes(1)
        .storagesPerDatanode(1)
        .manageNameDfsDirs(false)
        .format(true)
        .skipFsyncForTesting(false)
        .checkExitOnShutdown(false)
        .build();
    cluster.waitActive();
    return cluster;
  }

  private static void drain(InputStream in) throws IOException {
    byte[] buf = new byte[4096];
    while (in.read(buf) >= 0) {
      // Nothing to read: stdin only says when to stop.
    }
  }
}
