package io.strata.hbase.bench;

import io.strata.hbase.MiniHBase;
import io.strata.hbase.ycsb.HBaseDB;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB against HBase on one file system (make bench-hbase; docs/benchmarks.md): the log's syncs
 * on the file system itself ({@link SyncBench}: hflush and hsync by 1 and 8 writers), then an
 * HBase mini cluster with its root directory and its log there ({@link MiniHBase}), a pre-split
 * {@code usertable}, YCSB's load and workloads A, B, C, F and E with the seed's record shape (10
 * fields of 100 bytes), a major compaction and a restart (until every region is online again).
 * One line per measurement, tab-separated, is appended to {@code --out}: target, phase, op, ops,
 * errors, seconds, ops/s, p50, p95, p99 and max in microseconds, then the CPU time this JVM (HBase
 * and the file system's client) and the file system's server processes ({@code --server-pids})
 * used in the phase, in microseconds per operation ({@link CpuTime}). {@code --syncs} is each sync
 * writer's count of records; {@code --phases} names the phases to run (syncs, load, a, b, c, f,
 * e, major-compaction, restart; all by default; the load runs whenever a workload does).
 *
 * <pre>
 * java ... io.strata.hbase.bench.HBaseBench --target NAME --fs URI [--conf key=value]...
 *     [--records 20000] [--ops 10000] [--threads 8] [--syncs 2000] [--regionservers 1]
 *     [--phases syncs,load,a,...] [--server-pids PID,...] --out FILE
 * </pre>
 */
public final class HBaseBench {
  static final TableName TABLE = TableName.valueOf("usertable");
  static final String FAMILY = "family";

  /** YCSB's core workloads, as its workloads/ files define them, in the order run. */
  static final Map<String, String> WORKLOADS = new java.util.LinkedHashMap<>();

  static {
    WORKLOADS.put("a", mix(0.5, 0.5, 0, 0, 0));
    WORKLOADS.put("b", mix(0.95, 0.05, 0, 0, 0));
    WORKLOADS.put("c", mix(1, 0, 0, 0, 0));
    WORKLOADS.put("f", mix(0.5, 0, 0, 0, 0.5));
    WORKLOADS.put("e", mix(0, 0, 0.05, 0.95, 0)
        + " maxscanlength=100 scanlengthdistribution=uniform");
  }

  /** Every proportion, as CoreWorkload's defaults (0.95 reads, 0.05 updates) would leak in. */
  private static String mix(double read, double update, double insert, double scan, double rmw) {
    return "readproportion=" + read + " updateproportion=" + update + " insertproportion="
        + insert + " scanproportion=" + scan + " readmodifywriteproportion=" + rmw;
  }

  private final Params p;
  private final PrintStream out;
  private final CpuTime cpu;

  private HBaseBench(Params p, PrintStream out) {
    this.p = p;
    this.out = out;
    this.cpu = new CpuTime(p.serverPids);
  }

  public static void main(String[] args) throws Exception {
    Params p = Params.parse(args);
    try (PrintStream out = new PrintStream(Files.newOutputStream(Paths.get(p.out),
        StandardOpenOption.CREATE, StandardOpenOption.APPEND), true, StandardCharsets.UTF_8)) {
      new HBaseBench(p, out).run();
    }
    System.exit(0); // NB: HBase's and ZooKeeper's non-daemon threads outlive the cluster
  }

  private void run() throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set(FileSystem.FS_DEFAULT_NAME_KEY, p.fs);
    p.conf.forEach(conf::set);
    if (p.runs("syncs")) {
      syncs(conf);
    }
    if (!p.runs("load")) {
      return; // the workloads need the loaded table
    }
    try (MiniHBase hbase = MiniHBase.start(conf, p.regionServers)) {
      log("HBase up: root " + hbase.rootDir() + ", log " + hbase.walDir());
      createTable(hbase.admin());
      hbase.awaitOnline(TABLE);
      Properties base = ycsbProperties();
      Measurements.setProperties(base);
      phase(hbase, "load", base, true);
      for (Map.Entry<String, String> w : WORKLOADS.entrySet()) {
        if (!p.runs(w.getKey())) {
          continue;
        }
        Properties props = (Properties) base.clone();
        for (String kv : w.getValue().split(" ")) {
          props.setProperty(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        phase(hbase, w.getKey(), props, false);
      }
      if (p.runs("major-compaction")) {
        compact(hbase.admin());
      }
      if (p.runs("restart")) {
        cpu.start();
        long t = System.nanoTime();
        hbase.restart(TABLE);
        row("restart", "-", 1, 0, System.nanoTime() - t, null);
      }
    }
  }

  /**
   * The log's syncs on the file system alone ({@link SyncBench}): hflush, then hsync, by one
   * writer and by eight, each writer with a file of its own.
   */
  private void syncs(Configuration conf) throws Exception {
    FileSystem fs = FileSystem.newInstance(FileSystem.getDefaultUri(conf), conf);
    try {
      Path dir = new Path("/bench-syncs-" + System.nanoTime());
      fs.mkdirs(dir);
      SyncBench bench = new SyncBench(fs, dir);
      for (boolean hsync : new boolean[] {false, true}) {
        for (int writers : SYNC_WRITERS) {
          cpu.start();
          SyncBench.Result r = bench.run(writers, p.syncs, hsync);
          row(hsync ? "hsync" : "hflush", writers + (writers == 1 ? "-WRITER" : "-WRITERS"),
              r.ops(), 0, r.nanos(), r.latencies());
        }
      }
      fs.delete(dir, true);
    } finally {
      fs.close();
    }
  }

  /** How many writers {@link #syncs} runs, each case in turn. */
  static final int[] SYNC_WRITERS = {1, 8};

  private void createTable(Admin admin) throws IOException {
    byte[][] splits = new byte[9][];
    for (int i = 1; i <= 9; i++) {
      splits[i - 1] = ("user" + i).getBytes(StandardCharsets.UTF_8);
    }
    admin.createTable(TableDescriptorBuilder.newBuilder(TABLE)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY)).build(), splits);
  }

  private Properties ycsbProperties() {
    Properties props = new Properties();
    props.setProperty(CoreWorkload.TABLENAME_PROPERTY, TABLE.getNameAsString());
    props.setProperty("recordcount", Long.toString(p.records));
    props.setProperty("operationcount", Long.toString(p.ops));
    props.setProperty(CoreWorkload.FIELD_COUNT_PROPERTY, "10");
    props.setProperty(CoreWorkload.FIELD_LENGTH_PROPERTY, "100");
    props.setProperty(CoreWorkload.REQUEST_DISTRIBUTION_PROPERTY, "zipfian");
    props.setProperty(CoreWorkload.READ_ALL_FIELDS_PROPERTY, "true");
    return props;
  }

  /**
   * Runs one phase on {@code p.threads} threads: the load ({@code records} inserts) or a
   * workload ({@code ops} transactions), and writes its rows.
   */
  private void phase(MiniHBase hbase, String name, Properties props, boolean load)
      throws Exception {
    CoreWorkload w = new TimedWorkload();
    w.init(props);
    long total = load ? p.records : p.ops;
    List<TimedDB> dbs = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(p.threads);
    cpu.start();
    long start = System.nanoTime();
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < p.threads; t++) {
        TimedDB db = new TimedDB(new HBaseDB(hbase.connection(), FAMILY));
        dbs.add(db);
        long share = total / p.threads + (t < total % p.threads ? 1 : 0);
        Object state = w.initThread(props, t, p.threads);
        done.add(pool.submit(() -> {
          for (long i = 0; i < share; i++) {
            if (load) {
              w.doInsert(db, state);
            } else {
              w.doTransaction(db, state);
            }
          }
          db.cleanup();
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    long nanos = System.nanoTime() - start;
    Map<String, Histogram> merged = new TreeMap<>();
    Map<String, Long> errors = new TreeMap<>();
    for (TimedDB db : dbs) {
      db.latencies().forEach((op, h) -> merged.computeIfAbsent(op,
          k -> TimedDB.newHistogram()).add(h));
      db.errors().forEach((op, n) -> errors.merge(op, n, Long::sum));
    }
    long errs = errors.values().stream().mapToLong(Long::longValue).sum();
    row(name, "ALL", total, errs, nanos, null);
    for (Map.Entry<String, Histogram> e : merged.entrySet()) {
      row(name, e.getKey(), e.getValue().getTotalCount(), errors.getOrDefault(e.getKey(), 0L),
          nanos, e.getValue(), false);
    }
  }

  /** Flushes and major-compacts the table, timing until every region holds one file. */
  private void compact(Admin admin) throws Exception {
    admin.flush(TABLE);
    cpu.start();
    long t = System.nanoTime();
    admin.majorCompact(TABLE);
    while (!compacted(admin)) {
      Thread.sleep(50); // polling: HBase reports compactions only so
    }
    row("major-compaction", "-", 1, 0, System.nanoTime() - t, null);
  }

  private static boolean compacted(Admin admin) throws IOException {
    if (admin.getCompactionState(TABLE) != CompactionState.NONE) {
      return false;
    }
    for (ServerName sn : admin.getRegionServers()) {
      for (org.apache.hadoop.hbase.RegionMetrics m : admin.getRegionMetrics(sn, TABLE)) {
        if (m.getStoreFileCount() > 1) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Appends one result line: {@code ops} operations in {@code nanos}, their latencies {@code h}
   * (none for a compaction or a restart), and the CPU time this JVM and the servers used since
   * the phase's {@link CpuTime#start}, in microseconds per operation.
   */
  private void row(String phase, String op, long ops, long errors, long nanos, Histogram h) {
    row(phase, op, ops, errors, nanos, h, true);
  }

  /** As above; {@code withCpu} false for a kind of operation among others (no CPU of its own). */
  private void row(String phase, String op, long ops, long errors, long nanos, Histogram h,
      boolean withCpu) {
    double secs = nanos / 1e9;
    String lat = h == null ? "-\t-\t-\t-" : h.getValueAtPercentile(50) + "\t"
        + h.getValueAtPercentile(95) + "\t" + h.getValueAtPercentile(99) + "\t" + h.getMaxValue();
    CpuTime.Used used = cpu.used();
    String line = String.join("\t", p.target, phase, op, Long.toString(ops),
        Long.toString(errors), String.format(java.util.Locale.ROOT, "%.3f", secs),
        String.format(java.util.Locale.ROOT, "%.0f", ops / secs), lat,
        withCpu ? String.format(java.util.Locale.ROOT, "%.0f\t%.0f",
            used.selfMicros() / (double) ops, used.serversMicros() / (double) ops) : "-\t-");
    out.println(line);
    log(line);
  }

  private static void log(String s) {
    System.err.println("hbasebench: " + s);
  }

  /** The command line. */
  static final class Params {
    String target;
    String fs;
    String out;
    final Map<String, String> conf = new TreeMap<>();
    long records = 20_000;
    long ops = 10_000;
    int threads = 8;
    int syncs = 2000;
    /** The phases to run; empty: all. */
    final java.util.Set<String> phases = new java.util.HashSet<>();
    final List<Long> serverPids = new ArrayList<>();

    /** Whether phase {@code name} runs (the load runs if any workload does). */
    boolean runs(String name) {
      if (phases.isEmpty() || phases.contains(name)) {
        return true;
      }
      return name.equals("load") && phases.stream().anyMatch(WORKLOADS::containsKey);
    }
    int regionServers = 1;

    static Params parse(String[] args) {
      Params p = new Params();
      for (int i = 0; i < args.length; i++) {
        String v = i + 1 < args.length ? args[i + 1] : null;
        switch (args[i]) {
          case "--target" -> p.target = v;
          case "--fs" -> p.fs = v;
          case "--out" -> p.out = v;
          case "--conf" -> p.conf.put(v.substring(0, v.indexOf('=')),
              v.substring(v.indexOf('=') + 1));
          case "--records" -> p.records = Long.parseLong(v);
          case "--ops" -> p.ops = Long.parseLong(v);
          case "--threads" -> p.threads = Integer.parseInt(v);
          case "--syncs" -> p.syncs = Integer.parseInt(v);
          case "--phases" -> p.phases.addAll(List.of(v.split(",")));
          case "--server-pids" -> {
            for (String pid : v.split(",")) {
              p.serverPids.add(Long.parseLong(pid));
            }
          }
          case "--regionservers" -> p.regionServers = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("hbasebench: unknown argument "
              + args[i] + " (see the class's doc)");
        }
        i++;
      }
      if (p.target == null || p.fs == null || p.out == null) {
        throw new IllegalArgumentException("hbasebench: --target, --fs and --out are required");
      }
      return p;
    }
  }
}
