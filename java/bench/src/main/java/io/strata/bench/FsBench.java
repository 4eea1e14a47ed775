package io.strata.bench;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * Drives one or more Hadoop FileSystem URIs through the same workloads and writes the results as
 * TSV ({@link Row}); {@link Join} turns two targets' rows into one table with ratios.
 *
 * <pre>
 * java -cp ... io.strata.bench.FsBench --target strata=strata://default/ \
 *     --target hdfs=hdfs://127.0.0.1:PORT/ --conf fs.strata.meta.address=HOST:PORT \
 *     --pids strata=META_PID,WORKER_PID --pids hdfs=HDFS_PID \
 *     --out results.tsv [--sections meta,tree,io] [--threads 1,4,16,64] ...
 * </pre>
 *
 * <p>{@code --target-conf label:key=value} sets a key for one target only, over {@code
 * --conf}: {@code BENCH_COMPARE=security make bench-hdfs} drives two Strata services, one with
 * TLS and tokens and one without, each at its own address.
 *
 * <p>The cache section ({@link CacheWorkload}) compares targets that are views of one bucket
 * (Strata in cache mode and S3A): {@code make bench-cache-meta} runs it.
 *
 * {@code --pids} names a target's server processes on this host: each row's detail then says
 * how busy they and this client were during the phase ({@link Cpu}).
 *
 * <p>All targets run in this one JVM, phase by phase in turn (see the workloads), so that each
 * ratio compares runs seconds apart on the same machine. The results' header lines
 * ({@code # key<TAB>value}) hold every parameter, the JVM and the load average at start and end.
 */
public final class FsBench {
  private FsBench() {}

  public static void main(String[] args) throws Exception {
    Params p;
    try {
      p = Params.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("fsbench: " + e.getMessage());
      System.err.println("usage: FsBench --target label=URI [--target label=URI]"
          + " [--conf key=value] [--target-conf label:key=value] [--out FILE]"
          + " [--sections meta,tree,io] [--threads 1,4,16,64]"
          + " [--meta-ops N] [--meta-secs S] [--meta-only op,op] [--tree-files N] [--big-dir N] [--io-files N]"
          + " [--io-size SIZE] [--io-rounds N] [--io-huge-files N] [--io-huge-size SIZE]"
          + " [--io-only label,label] [--small-files N] [--small-size SIZE] [--cache-dirs N]"
          + " [--cache-files N] [--cache-file-size SIZE] [--cache-writer label] (see Params)");
      System.exit(2);
      return;
    }
    run(p);
  }

  /** Runs every section of {@code p} and writes the results to {@code p.out} (or stdout). */
  static void run(Params p) throws IOException {
    Configuration conf = new Configuration();
    p.conf.forEach(conf::set);
    try (PrintWriter w = writer(p.out)) {
      w.println(Row.HEADER);
      for (Map.Entry<String, String> e : p.describe().entrySet()) {
        w.println("# " + e.getKey() + "\t" + e.getValue());
      }
      w.println("# java\t" + System.getProperty("java.vm.name") + " "
          + System.getProperty("java.runtime.version"));
      w.println("# started\t" + Instant.now());
      w.println("# loadavg.start\t" + loadAverage());
      w.flush();
      List<Target> targets = new ArrayList<>();
      try {
        for (Map.Entry<String, String> e : p.targets.entrySet()) {
          Configuration tc = new Configuration(conf);
          p.targetConf.getOrDefault(e.getKey(), Map.of()).forEach(tc::set);
          targets.add(Target.open(e.getKey(), e.getValue(), p.dir,
              p.pids.getOrDefault(e.getKey(), List.of()), tc));
        }
        for (String section : p.sections) {
          System.err.printf("fsbench: section %s (load average %s)%n", section, loadAverage());
          w.println("# loadavg." + section + "\t" + loadAverage());
          runSection(section, p, targets, row -> {
            w.println(row.tsv());
            w.flush();
            System.err.println("fsbench: " + row.tsv());
          });
        }
      } finally {
        for (Target t : targets) {
          t.close();
        }
      }
      w.println("# loadavg.end\t" + loadAverage());
      w.println("# finished\t" + Instant.now());
    }
  }

  private static void runSection(String section, Params p, List<Target> targets,
      java.util.function.Consumer<Row> out) throws IOException {
    switch (section) {
      case "meta" -> new MetaWorkload(p, notIoOnly(p, targets), out).run();
      case "tree" -> new TreeWorkload(p, notIoOnly(p, targets), out).run();
      case "io" -> new IoWorkload(p, targets, out).run();
      case "cache" -> new CacheWorkload(p, targets, out).run();
      default -> throw new IllegalArgumentException("unknown section " + section);
    }
  }

  /** The targets that run every section ({@code --io-only} names those that do not). */
  private static List<Target> notIoOnly(Params p, List<Target> targets) {
    return targets.stream().filter(t -> !p.ioOnly.contains(t.label)).toList();
  }

  private static PrintWriter writer(String out) throws IOException {
    if (out == null) {
      return new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    }
    return new PrintWriter(new OutputStreamWriter(new FileOutputStream(out),
        StandardCharsets.UTF_8));
  }

  /** The 1, 5 and 15 minute load averages, or "-" where /proc is not there. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "-";
    }
  }
}
