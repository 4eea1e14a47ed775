package io.strata.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Joins two targets' FsBench results into one table: both figures and their ratio for every row
 * (how many times the subject is faster: ops/s and MB/s divided, seconds inverted), and a verdict
 * on each of issue 5's targets, as ratios at the highest thread count. Where FsBench measured
 * them, the CPU used by each target's servers and by the client during the phase (percent of one
 * core) stand beside each row as "subject/baseline".
 *
 * <p>With {@code --within PCT} the target of every row is instead the subject within PCT percent
 * of the baseline (a ratio of at least 1 - PCT/100): what a feature may cost, with the subject
 * running it and the baseline without (issue 23's TLS and tokens: {@code BENCH_COMPARE=security
 * make bench-hdfs}).
 *
 * <pre>
 * java -cp ... io.strata.bench.Join --subject strata --baseline hdfs [--within PCT] results.tsv...
 * </pre>
 */
public final class Join {
  private final String subject;
  private final String baseline;
  private final Map<String, String> params = new LinkedHashMap<>();
  private final Map<String, Row> rows = new LinkedHashMap<>();
  private final List<String> keys = new ArrayList<>();
  private final List<String> met = new ArrayList<>();
  private final List<String> missed = new ArrayList<>();
  /** The --within percentage, or null for issue 5's targets. */
  private final Double within;
  /** The io section's second baseline ({@code --io-baseline}, LocalFileSystem), or null. */
  String ioBaseline;

  Join(String subject, String baseline, Double within) {
    this.subject = subject;
    this.baseline = baseline;
    this.within = within;
  }

  public static void main(String[] args) throws IOException {
    String subject = null;
    String baseline = null;
    Double within = null;
    String ioBaseline = null;
    List<String> files = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--subject" -> subject = args[++i];
        case "--baseline" -> baseline = args[++i];
        case "--within" -> within = Double.parseDouble(args[++i]);
        case "--io-baseline" -> ioBaseline = args[++i];
        default -> files.add(args[i]);
      }
    }
    if (subject == null || baseline == null || files.isEmpty()) {
      System.err.println("usage: Join --subject LABEL --baseline LABEL [--within PCT] results.tsv...");
      System.exit(2);
    }
    Join j = new Join(subject, baseline, within);
    j.ioBaseline = ioBaseline;
    for (String f : files) {
      j.read(Files.readAllLines(Path.of(f), StandardCharsets.UTF_8));
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.print(j.table());
  }

  /** Takes in the lines of one results file. */
  void read(List<String> lines) {
    for (String line : lines) {
      if (line.startsWith("# ")) {
        String[] kv = line.substring(2).split("\t", 2);
        params.put(kv[0], kv.length > 1 ? kv[1] : "");
      } else if (!line.isBlank() && !line.equals(Row.HEADER)) {
        Row r = Row.parse(line);
        String key = r.section() + "\t" + r.op() + "\t" + r.threads();
        if (!keys.contains(key)) {
          keys.add(key);
        }
        rows.put(r.target() + "\t" + key, r);
      }
    }
  }

  /** The whole report: parameters, the three tables, the targets. */
  String table() {
    StringBuilder b = new StringBuilder();
    b.append(parameters()).append('\n');
    if (has("meta")) {
      b.append(meta()).append('\n');
    }
    if (has("tree")) {
      b.append(tree()).append('\n');
    }
    if (has("io")) {
      b.append(io()).append('\n');
      if (ioBaseline != null) {
        b.append(IoAgainst.table(this, ioBaseline)).append('\n');
      }
    }
    if (has("cache")) {
      b.append(cache()).append('\n');
    }
    b.append(verdicts());
    return b.toString();
  }

  /** Whether the results have rows of {@code section}. */
  private boolean has(String section) {
    return keys.stream().anyMatch(k -> k.startsWith(section + "\t"));
  }

  private String parameters() {
    StringBuilder b = new StringBuilder();
    b.append("parameters:");
    for (Map.Entry<String, String> e : params.entrySet()) {
      if (!e.getKey().startsWith("loadavg") && !e.getKey().equals("finished")) {
        b.append(' ').append(e.getKey()).append('=').append(e.getValue().replace(' ', '_'));
      }
    }
    b.append('\n').append("load average (1/5/15 min):");
    for (Map.Entry<String, String> e : params.entrySet()) {
      if (e.getKey().startsWith("loadavg.")) {
        b.append(' ').append(e.getKey().substring(8)).append(' ').append(e.getValue())
            .append(';');
      }
    }
    b.setLength(b.length() - 1);
    return b.append('\n').toString();
  }

  private int maxThreads() {
    int max = 0;
    for (String k : keys) {
      if (k.startsWith("meta\t")) {
        max = Math.max(max, Integer.parseInt(k.split("\t")[2]));
      }
    }
    return max;
  }

  private String meta() {
    String s = subject;
    String h = baseline;
    TextTable t = new TextTable(true, "op", "threads", s + " ops/s", h + " ops/s", "ratio",
        "p50 ms " + s + "/" + h, "p95", "p99", "p99.9", "max", "srv cpu%", "cli cpu%",
        within != null ? "target" : "target (" + maxThreads() + " threads)");
    int max = maxThreads();
    for (String k : keys) {
      if (!k.startsWith("meta\t")) {
        continue;
      }
      Row a = rows.get(s + "\t" + k);
      Row b = rows.get(h + "\t" + k);
      if (a == null || b == null) {
        continue;
      }
      double ratio = a.opsPerSec() / b.opsPerSec();
      String target = within != null ? withinTarget(a.op() + " x" + a.threads(), ratio)
          : a.threads() == max ? metaTargets(a, b, ratio) : "";
      t.add(a.op() + errors(a, b), Integer.toString(a.threads()), num(a.opsPerSec()),
          num(b.opsPerSec()), ratio(ratio), pair(a.p50(), b.p50()), pair(a.p95(), b.p95()),
          pair(a.p99(), b.p99()), pair(a.p999(), b.p999()), pair(a.max(), b.max()),
          cpu(a, b, "srv_cpu"), cpu(a, b, "cli_cpu"), target);
    }
    return "Metadata (NNBench-style): ops/s, latency in ms; ratio = " + s + " ops/s / " + h
        + " ops/s\n" + t.render();
  }

  private String metaTargets(Row a, Row b, double ratio) {
    List<String> v = new ArrayList<>();
    double want = switch (a.op()) {
      case "create_write_0", "create_write_512" -> 10;
      case "open_read" -> 3;
      default -> 1;
    };
    String what = want == 1 ? "faster" : "≥" + (int) want + "x";
    v.add(verdict(a.op() + " " + what, ratio > want || (want > 1 && ratio >= want), ratio(ratio)));
    v.add(verdict(a.op() + " p99<" + baseline + " p50", a.p99() < b.p50(),
        fmt(a.p99()) + " vs " + fmt(b.p50()) + " ms"));
    return String.join(", ", v).replace(a.op() + " ", "");
  }

  private String tree() {
    String s = subject;
    String h = baseline;
    TextTable t = new TextTable(true, "tree operation", "entries", s + " s", h + " s", "ratio",
        "srv cpu%", "cli cpu%", "target");
    for (String k : keys) {
      if (!k.startsWith("tree\t")) {
        continue;
      }
      Row a = rows.get(s + "\t" + k);
      Row b = rows.get(h + "\t" + k);
      if (a == null || b == null) {
        continue;
      }
      double ratio = b.secs() / a.secs();
      String target = within != null ? withinTarget(a.op(), ratio) : switch (a.op()) {
        case "du -s", "count" -> verdict(a.op() + " ≥100x", ratio >= 100, ratio(ratio));
        case "ls -R" -> verdict(a.op() + " ≥2x", ratio >= 2, ratio(ratio));
        default -> "";
      };
      String entries = a.op().startsWith("prepare") ? text(a) : Long.toString(a.count());
      if (a.op().equals("du -s")) {
        entries = a.count() + " bytes";
      }
      t.add(a.op() + errors(a, b), entries, secs(a.secs()), secs(b.secs()), ratio(ratio),
          cpu(a, b, "srv_cpu"), cpu(a, b, "cli_cpu"), target.replace(a.op() + " ", ""));
    }
    return "Tree operations: seconds (median of runs); ratio = " + h + " s / " + s + " s\n"
        + t.render();
  }

  private String io() {
    String s = subject;
    String h = baseline;
    TextTable t = new TextTable(false, "throughput", "files", "threads", s + " MB/s", h + " MB/s",
        "ratio", s + " files/s", h + " files/s", "srv cpu%", "cli cpu%", "target");
    for (String k : keys) {
      if (!k.startsWith("io\t")) {
        continue;
      }
      Row a = rows.get(s + "\t" + k);
      Row b = rows.get(h + "\t" + k);
      if (a == null || b == null) {
        continue;
      }
      double ratio = a.mbPerSec() / b.mbPerSec();
      t.add(a.op() + errors(a, b), text(a), Integer.toString(a.threads()), num(a.mbPerSec()),
          num(b.mbPerSec()), ratio(ratio), num(a.opsPerSec()), num(b.opsPerSec()),
          cpu(a, b, "srv_cpu"), cpu(a, b, "cli_cpu"),
          within != null ? withinTarget(a.op(), ratio) : "");
    }
    return "Throughput (TestDFSIO-style): MB/s = 10^6 bytes/s over the phase's wall time; ratio = "
        + s + " / " + h + "\n" + t.render();
  }

  /**
   * The cache section: one bucket's objects through the subject (Strata in cache mode) and the
   * baseline (S3A). Ratios as in the metadata table (the first walk's, of seconds, inverted);
   * issue 18's target is getFileStatus and listStatus ≥10x at every thread count.
   */
  private String cache() {
    String s = subject;
    String h = baseline;
    TextTable t = new TextTable(true, "op", "threads", s + " ops/s", h + " ops/s", "ratio",
        "p50 ms " + s + "/" + h, "p99", "max", "srv cpu%", "cli cpu%", "target");
    StringBuilder notes = new StringBuilder();
    for (String k : keys) {
      if (!k.startsWith("cache\t")) {
        continue;
      }
      Row a = rows.get(s + "\t" + k);
      Row b = rows.get(h + "\t" + k);
      if (a == null || b == null) {
        Row w = a != null ? a : b;
        notes.append(w.target()).append(' ').append(w.op()).append(": ").append(w.count())
            .append(" in ").append(secs(w.secs())).append(" s (").append(num(w.opsPerSec()))
            .append("/s); ").append(w.detail()).append('\n');
        continue;
      }
      if (a.op().equals("first walk")) {
        double ratio = b.secs() / a.secs();
        t.add(a.op() + errors(a, b), "1", secs(a.secs()) + " s", secs(b.secs()) + " s",
            ratio(ratio), "-", "-", "-", cpu(a, b, "srv_cpu"), cpu(a, b, "cli_cpu"),
            a.count() + " entries");
        continue;
      }
      double ratio = a.opsPerSec() / b.opsPerSec();
      String target = !a.op().equals("getFileStatus") && !a.op().equals("listStatus") ? ""
          : verdict(a.op() + " x" + a.threads() + " ≥10x", ratio >= 10, ratio(ratio))
              .replace(a.op() + " x" + a.threads() + " ", "");
      t.add(a.op() + errors(a, b), Integer.toString(a.threads()), num(a.opsPerSec()),
          num(b.opsPerSec()), ratio(ratio), pair(a.p50(), b.p50()), pair(a.p99(), b.p99()),
          pair(a.max(), b.max()), cpu(a, b, "srv_cpu"), cpu(a, b, "cli_cpu"), target);
    }
    return "Cache mode (one bucket's objects through both): ops/s, latency in ms; ratio = " + s
        + " / " + h + " (first walk: " + h + " s / " + s + " s)\n" + t.render() + notes;
  }

  /** The --within target of a row whose ratio (subject's speed / baseline's) is {@code ratio}. */
  private String withinTarget(String what, double ratio) {
    String pct = java.math.BigDecimal.valueOf(within).stripTrailingZeros().toPlainString();
    return verdict(what + " within " + pct + "%", ratio >= 1 - within / 100, ratio(ratio))
        .replace(what + " ", "");
  }

  private String verdicts() {
    StringBuilder b = new StringBuilder();
    b.append("targets met (").append(met.size()).append("): ").append(String.join("; ", met));
    b.append('\n').append("targets missed (").append(missed.size()).append("): ")
        .append(missed.isEmpty() ? "none" : String.join("; ", missed)).append('\n');
    long errs = rows.values().stream().mapToLong(Row::errors).sum();
    b.append("errors: ").append(errs == 0 ? "none" : errs + " (rows marked *)").append('\n');
    return b.toString();
  }

  /** The rows of the io section, by target: op and threads to row. */
  List<Row> ioRows(String target) {
    List<Row> l = new ArrayList<>();
    for (String k : keys) {
      Row r = rows.get(target + "\t" + k);
      if (k.startsWith("io\t") && r != null) {
        l.add(r);
      }
    }
    return l;
  }

  String subject() {
    return subject;
  }

  String verdict(String what, boolean ok, String figure) {
    (ok ? met : missed).add(what + " (" + figure + ")");
    return what + " " + (ok ? "met" : "MISSED");
  }

  /** A row's detail without its CPU figures. */
  private static String text(Row r) {
    String d = r.detail();
    int i = d.indexOf("srv_cpu=");
    int rounds = d.indexOf("; rounds "); // the io rounds: IoAgainst's table shows them
    if (rounds >= 0 && (i < 0 || rounds < i)) {
      i = rounds;
    }
    return (i < 0 ? d : d.substring(0, i)).replaceAll("[; ]+$", "");
  }

  /** "s/h" of a CPU figure (percent of one core) from the rows' details, "-" if absent. */
  private static String cpu(Row a, Row b, String key) {
    return cpuOf(a, key) + "/" + cpuOf(b, key);
  }

  static String cpuOf(Row r, String key) {
    for (String f : r.detail().split("[; ]+")) {
      if (f.startsWith(key + "=")) {
        return f.substring(key.length() + 1);
      }
    }
    return "-";
  }

  private static String errors(Row a, Row b) {
    return a.errors() + b.errors() > 0 ? " *" : "";
  }

  static String ratio(double r) {
    if (Double.isNaN(r) || Double.isInfinite(r)) {
      return "-";
    }
    return String.format(Locale.ROOT, r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r);
  }

  static String num(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  }

  private static String secs(double v) {
    return String.format(Locale.ROOT, v >= 10 ? "%.1f" : "%.3f", v);
  }

  private static String fmt(double ms) {
    return Double.isNaN(ms) ? "-" : String.format(Locale.ROOT, ms >= 100 ? "%.0f"
        : ms >= 10 ? "%.1f" : ms >= 1 ? "%.2f" : "%.3f", ms);
  }

  private static String pair(double a, double b) {
    return fmt(a) + "/" + fmt(b);
  }
}
