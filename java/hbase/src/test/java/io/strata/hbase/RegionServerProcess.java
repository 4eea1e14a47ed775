package io.strata.hbase;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.regionserver.HRegionServer;

/**
 * A region server of a {@link MiniHBase} cluster in a JVM of its own, so that it can be killed
 * as a crashed server is: SIGKILL, nothing flushed or closed on the way out (an in-process
 * server's "kill" is an abort that goes on running its threads for a while). It has the
 * cluster's configuration (an hbase-site.xml first on its classpath), the test JVM's classpath
 * and module options, and its log in target/strata-logs/regionserver-*.log.
 */
final class RegionServerProcess implements AutoCloseable {
  /** How long the server may take to join the cluster. */
  static final Duration JOIN_WAIT = Duration.ofMinutes(3);

  private final Process process;
  private final ServerName name;

  private RegionServerProcess(Process process, ServerName name) {
    this.process = process;
    this.name = name;
  }

  /**
   * Starts a region server of {@code hbase}'s cluster and waits until the master counts it; its
   * ZooKeeper session expires {@code sessionMillis} after it dies, so that the master notices
   * soon.
   */
  static RegionServerProcess start(MiniHBase hbase, int sessionMillis) throws Exception {
    Configuration c = new Configuration(hbase.conf());
    c.setBoolean("hbase.cluster.distributed", true); // else the command refuses to start one
    c.setClass(HConstants.REGION_SERVER_IMPL, HRegionServer.class, HRegionServer.class);
    c.setInt("hbase.regionserver.port", 0);
    c.setInt("hbase.regionserver.info.port", -1);
    c.setInt("zookeeper.session.timeout", sessionMillis);
    Path logDir = Paths.get("target", "strata-logs");
    Files.createDirectories(logDir);
    Path confDir = Files.createTempDirectory(logDir, "regionserver-conf-");
    try (OutputStream o = Files.newOutputStream(confDir.resolve("hbase-site.xml"))) {
      c.writeXml(o);
    }
    Admin admin = hbase.admin();
    List<ServerName> before = List.copyOf(admin.getRegionServers());
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx1g");
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-") || a.startsWith("-Dorg.apache.hbase.thirdparty")) {
        cmd.add(a); // what HBase needs on Java 17 (hbase.jvm.args)
      }
    }
    cmd.add("-cp");
    cmd.add(confDir + java.io.File.pathSeparator + System.getProperty("java.class.path"));
    cmd.add(HRegionServer.class.getName());
    cmd.add("start");
    Path log = Files.createTempFile(logDir, "regionserver-", ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
    try {
      return new RegionServerProcess(p, awaitJoined(admin, before, p, log));
    } catch (Exception | Error e) {
      p.destroyForcibly();
      throw e;
    }
  }

  /**
   * Waits until the master lists a region server it did not list {@code before}, and that server
   * answers (it refuses calls until it has started).
   */
  private static ServerName awaitJoined(Admin admin, List<ServerName> before, Process p, Path log)
      throws Exception {
    long deadline = System.nanoTime() + JOIN_WAIT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IOException("the region server process exited (" + p.exitValue()
            + "); its log: " + log.toAbsolutePath());
      }
      for (ServerName sn : admin.getRegionServers()) {
        if (!before.contains(sn) && answers(admin, sn)) {
          return sn;
        }
      }
      Thread.sleep(100); // polling: the master tells of new servers only so
    }
    throw new IOException("the region server did not join within " + JOIN_WAIT + "; its log: "
        + log.toAbsolutePath());
  }

  private static boolean answers(Admin admin, ServerName sn) {
    try {
      admin.getRegions(sn);
      return true;
    } catch (IOException e) {
      return false; // not running yet
    }
  }

  /** The server's name, as the master knows it. */
  ServerName name() {
    return name;
  }

  /** Kills the server with SIGKILL and waits until the process is gone. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  @Override
  public void close() {
    try {
      kill();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
