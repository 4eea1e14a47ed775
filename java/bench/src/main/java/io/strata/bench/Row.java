package io.strata.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One measurement of one target: a line of FsBench's TSV results, which {@link Join} reads back.
 * Latencies are milliseconds; NaN (written "-") where a figure does not apply.
 *
 * <p>Columns: target, section (meta, tree, io), op, threads, count (operations or entries),
 * errors, secs, ops/s, MB/s (10^6 bytes), p50, p95, p99, p99.9, max, detail (free text).
 */
record Row(String target, String section, String op, int threads, long count, long errors,
    double secs, double opsPerSec, double mbPerSec, double p50, double p95, double p99,
    double p999, double max, String detail) {

  static final String HEADER = String.join("\t", "target", "section", "op", "threads", "count",
      "errors", "secs", "ops_s", "mb_s", "p50_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms",
      "detail");

  /** A row of a phase run by {@link Phase}: rate and latencies from its statistics. */
  static Row of(String target, String section, String op, int threads, Phase.Stats s,
      long bytes, String detail) {
    double mb = bytes > 0 ? bytes / 1e6 / s.secs() : Double.NaN;
    return new Row(target, section, op, threads, s.count(), s.errors(), s.secs(),
        s.count() / s.secs(), mb, s.percentile(50), s.percentile(95), s.percentile(99),
        s.percentile(99.9), s.max(), detail);
  }

  /** A row with a duration only (a tree operation): count is what it saw. */
  static Row timed(String target, String op, long count, long errors, double secs,
      String detail) {
    double nan = Double.NaN;
    return new Row(target, "tree", op, 1, count, errors, secs, count / secs, nan, nan, nan, nan,
        nan, nan, detail);
  }

  /** This row, in section {@code s}. */
  Row in(String s) {
    return new Row(target, s, op, threads, count, errors, secs, opsPerSec, mbPerSec, p50, p95,
        p99, p999, max, detail);
  }

  String tsv() {
    return String.join("\t", target, section, op, Integer.toString(threads), Long.toString(count),
        Long.toString(errors), num(secs), num(opsPerSec), num(mbPerSec), num(p50), num(p95),
        num(p99), num(p999), num(max), detail.isEmpty() ? "-" : detail);
  }

  static Row parse(String line) {
    String[] f = line.split("\t", -1);
    if (f.length != 15) {
      throw new IllegalArgumentException("not a result row (" + f.length + " fields): " + line);
    }
    List<Double> d = new ArrayList<>();
    for (int i = 6; i <= 13; i++) {
      d.add(f[i].equals("-") ? Double.NaN : Double.parseDouble(f[i]));
    }
    return new Row(f[0], f[1], f[2], Integer.parseInt(f[3]), Long.parseLong(f[4]),
        Long.parseLong(f[5]), d.get(0), d.get(1), d.get(2), d.get(3), d.get(4), d.get(5), d.get(6),
        d.get(7), f[14].equals("-") ? "" : f[14]);
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.6f", v);
  }
}
