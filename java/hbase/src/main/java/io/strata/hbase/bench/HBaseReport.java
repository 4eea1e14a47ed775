package io.strata.hbase.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Joins the rounds of {@link HBaseBench} on two targets into one table (make bench-hbase): per
 * phase and operation the median over rounds of each target's throughput, latency percentiles
 * and CPU time per operation (HBase's JVM + the file system's servers), and the subject's
 * throughput over the baseline's (for the compaction and the restart, the baseline's time over
 * the subject's: above 1 means the subject is faster).
 *
 * <pre>
 * java ... io.strata.hbase.bench.HBaseReport --subject strata --baseline hdfs RESULTS.tsv
 * </pre>
 */
public final class HBaseReport {
  private HBaseReport() {}

  public static void main(String[] args) throws IOException {
    String subject = args[1];
    String baseline = args[3];
    // (phase, op) in first-seen order -> target -> rounds' rows
    Map<String, Map<String, List<String[]>>> rows = new LinkedHashMap<>();
    for (String line : Files.readAllLines(Paths.get(args[4]))) {
      String[] f = line.split("\t");
      rows.computeIfAbsent(f[1] + "\t" + f[2], k -> new LinkedHashMap<>())
          .computeIfAbsent(f[0], k -> new ArrayList<>()).add(f);
    }
    System.out.print(table(rows, subject, baseline));
  }

  static String table(Map<String, Map<String, List<String[]>>> rows, String subject,
      String baseline) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%-16s %-18s %7s %9s %9s %7s  %-22s %-22s %-16s %-16s%n",
        "phase", "op", "rounds", subject, baseline, "ratio", subject + " p50/p99 us",
        baseline + " p50/p99 us", subject + " cpu us", baseline + " cpu us"));
    for (Map.Entry<String, Map<String, List<String[]>>> e : rows.entrySet()) {
      String[] key = e.getKey().split("\t");
      List<String[]> s = e.getValue().getOrDefault(subject, List.of());
      List<String[]> h = e.getValue().getOrDefault(baseline, List.of());
      boolean timed = key[1].equals("-"); // a compaction or a restart: seconds
      String sv = timed ? secs(s) : rate(s);
      String hv = timed ? secs(h) : rate(h);
      double sm = median(s, timed ? 5 : 6);
      double hm = median(h, timed ? 5 : 6);
      double ratio = timed ? hm / sm : sm / hm;
      b.append(String.format(Locale.ROOT, "%-16s %-18s %7s %9s %9s %7.2f  %-22s %-22s %-16s %-16s%n",
          key[0], key[1], s.size() + "/" + h.size(), sv, hv, ratio, lat(s), lat(h), cpu(s),
          cpu(h)));
    }
    b.append("ops/s (medians of the rounds), except major-compaction and restart: seconds; "
        + "ratio: " + subject + " ops/s over " + baseline + "'s, or " + baseline + "'s seconds "
        + "over " + subject + "'s (above 1: " + subject + " faster); cpu: CPU time per "
        + "operation, HBase's JVM (YCSB and the file system's client in it) + the file "
        + "system's servers, in us; errors: "
        + errors(rows) + "\n");
    return b.toString();
  }

  private static String rate(List<String[]> r) {
    return r.isEmpty() ? "-" : String.format(Locale.ROOT, "%.0f", median(r, 6));
  }

  private static String secs(List<String[]> r) {
    return r.isEmpty() ? "-" : String.format(Locale.ROOT, "%.2fs", median(r, 5));
  }

  private static String lat(List<String[]> r) {
    if (r.isEmpty() || r.get(0)[7].equals("-")) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.0f/%.0f", median(r, 7), median(r, 9));
  }

  /** The CPU time per operation, this JVM's + the servers', if the rows have it. */
  private static String cpu(List<String[]> r) {
    if (r.isEmpty() || r.get(0).length < 13 || r.get(0)[11].equals("-")) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.0f+%.0f", median(r, 11), median(r, 12));
  }

  private static long errors(Map<String, Map<String, List<String[]>>> rows) {
    long n = 0;
    for (Map<String, List<String[]>> byTarget : rows.values()) {
      for (List<String[]> rs : byTarget.values()) {
        for (String[] f : rs) {
          n += f[2].equals("ALL") ? Long.parseLong(f[4]) : 0;
        }
      }
    }
    return n;
  }

  /** The median of column {@code col} over {@code r} (the lower middle of an even count). */
  static double median(List<String[]> r, int col) {
    if (r.isEmpty()) {
      return Double.NaN;
    }
    double[] v = r.stream().mapToDouble(f -> Double.parseDouble(f[col])).sorted().toArray();
    return v[(v.length - 1) / 2];
  }
}
