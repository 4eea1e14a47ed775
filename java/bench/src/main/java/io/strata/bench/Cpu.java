package io.strata.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time of processes, from /proc/PID/stat (user + system, in clock ticks of 1/100 s, Linux's
 * USER_HZ). Used to say, for each phase, how busy a target's server processes and this client
 * were: the figures that tell what bounds a result on a small machine. Where /proc is missing
 * every reading is 0 and nothing is reported.
 */
final class Cpu {
  private static final double TICKS_PER_SEC = 100;

  private Cpu() {}

  /** Total CPU seconds used so far by the processes (those gone count 0). */
  static double seconds(List<Long> pids) {
    double total = 0;
    for (long pid : pids) {
      total += seconds(pid);
    }
    return total;
  }

  static double seconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      // The command name (field 2) may hold spaces; the fields after it are fixed.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SEC;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** A reading of a target's servers and of this JVM, to take the difference of later. */
  record Mark(double server, double client, long nanos) {
    static Mark of(Target t) {
      return new Mark(seconds(t.serverPids), seconds(ProcessHandle.current().pid()),
          System.nanoTime());
    }

    /**
     * "srv_cpu=N cli_cpu=M": percent of one core used by the servers and by this client since
     * the mark; empty if the target names no server processes.
     */
    String since(Target t) {
      if (t.serverPids.isEmpty()) {
        return "";
      }
      Mark now = of(t);
      double secs = (now.nanos - nanos) / 1e9;
      return String.format(java.util.Locale.ROOT, "srv_cpu=%.0f cli_cpu=%.0f",
          100 * (now.server - server) / secs, 100 * (now.client - client) / secs);
    }
  }

  /** Joins a phase's detail text and its CPU figures. */
  static String detail(String text, String cpu) {
    if (cpu.isEmpty()) {
      return text;
    }
    return text.isEmpty() ? cpu : text + "; " + cpu;
  }
}
