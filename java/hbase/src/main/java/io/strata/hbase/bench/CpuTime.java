package io.strata.hbase.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

/**
 * The CPU time a phase of {@link HBaseBench} cost: this JVM's (HBase, YCSB's threads and the file
 * system's client), and the file system's server processes' (Strata's {@code strata meta} and
 * {@code strata worker}, or HDFS's MiniDFSCluster JVM), read from {@code /proc/PID/stat} (user
 * and system time, in clock ticks of 10 ms). On a machine others share, CPU time per operation is
 * steadier than elapsed time, and says which side costs what.
 */
final class CpuTime {
  /** Linux's USER_HZ, what /proc counts in. */
  private static final long TICK_MICROS = 10_000;

  /** CPU time used since {@link #start}, in microseconds. */
  record Used(long selfMicros, long serversMicros) {}

  private final List<Long> servers;
  private long self0;
  private long servers0;

  CpuTime(List<Long> servers) {
    this.servers = List.copyOf(servers);
  }

  /** Starts a phase. */
  void start() {
    self0 = self();
    servers0 = servers();
  }

  /** What the phase used so far. */
  Used used() {
    return new Used(self() - self0, servers() - servers0);
  }

  private static long self() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime() / 1000;
  }

  /** The servers' CPU time in microseconds; a server that is gone counts nothing. */
  private long servers() {
    long ticks = 0;
    for (long pid : servers) {
      try {
        String stat = Files.readString(Paths.get("/proc", Long.toString(pid), "stat"));
        // Fields after the command's ")": state is the 3rd field, utime the 14th, stime the 15th.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
      } catch (IOException | RuntimeException e) {
        // not running (or not Linux): nothing
      }
    }
    return ticks * TICK_MICROS;
  }
}
