package io.strata.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The io section against a second baseline, the local file system through Hadoop's checksummed
 * {@code LocalFileSystem} (verified bytes, no service, no network): the floor a client of any
 * service is measured against. Issue 41's targets, for the large files: writes at least 2,000
 * MB/s and 1.8x the baseline, reads at least 3,000 MB/s and 0.6x, and the slowest round at least
 * two thirds of the fastest. Beside each row, the CPU seconds per GB (client and servers) of
 * both, from the median round.
 */
final class IoAgainst {
  private static final Pattern SPREAD = Pattern.compile("slowest/fastest ([0-9.]+)");
  private static final Pattern CPU = Pattern.compile("cpu_s_per_GB=([0-9.]+)");

  private IoAgainst() {}

  static String table(Join j, String baseline) {
    String s = j.subject();
    TextTable t = new TextTable(false, "throughput", "files", s + " MB/s", baseline + " MB/s",
        "ratio", "slowest/fastest " + s + "/" + baseline, "cpu s/GB " + s + "/" + baseline,
        "target");
    List<Row> base = j.ioRows(baseline);
    for (Row a : j.ioRows(s)) {
      Row b = base.stream().filter(r -> r.op().equals(a.op()) && r.threads() == a.threads())
          .findFirst().orElse(null);
      if (b == null) {
        continue;
      }
      double ratio = a.mbPerSec() / b.mbPerSec();
      t.add(a.op(), String.valueOf(a.count()), Join.num(a.mbPerSec()), Join.num(b.mbPerSec()),
          Join.ratio(ratio), field(a, SPREAD) + "/" + field(b, SPREAD),
          field(a, CPU) + "/" + field(b, CPU), targets(j, a, ratio));
    }
    return "Throughput against " + baseline + " (" + s + " / " + baseline + "; large and huge"
        + " rows: the median of the rounds)\n" + t.render();
  }

  private static String targets(Join j, Row a, double ratio) {
    double mb;
    double want;
    switch (a.op()) {
      case "write large" -> {
        mb = 2000;
        want = 1.8;
      }
      case "read large" -> {
        mb = 3000;
        want = 0.6;
      }
      default -> {
        return "";
      }
    }
    List<String> v = new ArrayList<>();
    String op = a.op();
    v.add(j.verdict(op + " ≥" + (int) mb + " MB/s", a.mbPerSec() >= mb, Join.num(a.mbPerSec())));
    v.add(j.verdict(op + " ≥" + want + "x local", ratio >= want, Join.ratio(ratio)));
    String spread = field(a, SPREAD);
    if (!spread.equals("-")) {
      v.add(j.verdict(op + " slowest ≥2/3 fastest", Double.parseDouble(spread) >= 2.0 / 3,
          spread));
    }
    return String.join(", ", v).replace(op + " ", "");
  }

  private static String field(Row r, Pattern p) {
    Matcher m = p.matcher(r.detail());
    return m.find() ? m.group(1) : "-";
  }
}
