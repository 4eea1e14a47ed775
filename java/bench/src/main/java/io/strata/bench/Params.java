package io.strata.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * FsBench's parameters, from {@code --name value} flags. Every parameter is also written to the
 * results ({@link #describe}), so that a table can be reproduced from them.
 */
final class Params {
  /** label=URI of each file system to drive, in the order given. */
  final Map<String, String> targets = new LinkedHashMap<>();
  /** Server process ids of each target ({@code --pids label=PID,PID}), for CPU figures. */
  final Map<String, List<Long>> pids = new LinkedHashMap<>();
  /** Hadoop configuration for every target ({@code --conf key=value}). */
  final Map<String, String> conf = new LinkedHashMap<>();
  /**
   * Hadoop configuration for one target, over {@link #conf} ({@code --target-conf
   * label:key=value}): two targets of one scheme at different services, say.
   */
  final Map<String, Map<String, String>> targetConf = new LinkedHashMap<>();
  /** Directory, in every target, that the benchmark owns (deleted first). */
  String dir = "/strata-bench";
  /** Sections to run: meta, tree, io; cache (only on targets over one bucket). */
  List<String> sections = List.of("meta", "tree", "io");
  /** Client thread counts of the metadata section. */
  List<Integer> threads = List.of(1, 4, 16, 64);
  /** Operations per metadata phase, divided among its threads. */
  long metaOps = 20_000;
  /**
   * The metadata phases to run (MetaWorkload.OPS), with those whose files they use; empty: all.
   */
  List<String> metaOnly = List.of();
  /** Time limit of one metadata phase on one target, seconds; a phase cut short reports what it did. */
  double metaSecs = 30;
  /** Entries of the directory that listStatus lists. */
  int listSize = 100;
  /** Files of the nested tree. */
  long treeFiles = 1_000_000;
  /** Files per leaf directory of the tree. */
  int treeDirFiles = 100;
  /** Entries of the single-level directory. */
  int bigDir = 100_000;
  /** Threads that prepare the tree and the big directory. */
  int prepThreads = 64;
  /** Runs of each tree operation; the median is reported. */
  int treeRepeat = 3;
  /** Large files written and read in parallel (one thread each), and their size. */
  int ioFiles = 4;
  long ioSize = 256L << 20;
  /** Rounds of the large-file phases, targets alternated; each row is the median round. */
  int ioRounds = 1;
  /** Huge files (0: none), written and read as the large ones, each target in turn. */
  int ioHugeFiles = 0;
  long ioHugeSize = 4L << 30;
  /** The targets that run the huge files (empty: all). */
  List<String> ioHugeTargets = List.of();
  /** Targets that run the io section only (a baseline such as file:///, LocalFileSystem). */
  List<String> ioOnly = List.of();
  /** Buffer of the large-file reads and writes. */
  int ioBuffer = 1 << 20;
  /** Small files written and read, their size and the threads doing it. */
  int smallFiles = 5_000;
  long smallSize = 64L << 10;
  int smallThreads = 16;
  /** The cache section's objects: directories, objects in each, their size. */
  int cacheDirs = 100;
  int cacheFiles = 100;
  long cacheFileSize = 1 << 10;
  /** The target that writes them (null: the last one); the others see them in the bucket. */
  String cacheWriter;
  /** Where the results go (TSV); null for stdout. */
  String out;

  static Params parse(String[] args) {
    Params p = new Params();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (!flag.startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --flag value, got " + flag);
      }
      p.set(flag.substring(2), args[++i]);
    }
    if (p.targets.isEmpty()) {
      throw new IllegalArgumentException("no --target label=URI");
    }
    return p;
  }

  private void set(String name, String v) {
    switch (name) {
      case "target" -> {
        String[] kv = pair(v);
        targets.put(kv[0], kv[1]);
      }
      case "conf" -> {
        String[] kv = pair(v);
        conf.put(kv[0], kv[1]);
      }
      case "target-conf" -> {
        int colon = v.indexOf(':');
        if (colon <= 0) {
          throw new IllegalArgumentException("expected label:key=value, got " + v);
        }
        String[] kv = pair(v.substring(colon + 1));
        targetConf.computeIfAbsent(v.substring(0, colon), k -> new LinkedHashMap<>())
            .put(kv[0], kv[1]);
      }
      case "pids" -> {
        String[] kv = pair(v);
        List<Long> l = new ArrayList<>();
        for (String pid : kv[1].split(",")) {
          l.add(Long.parseLong(pid.trim()));
        }
        pids.put(kv[0], List.copyOf(l));
      }
      case "dir" -> dir = v;
      case "sections" -> sections = List.of(v.split(","));
      case "threads" -> threads = ints(v);
      case "meta-ops" -> metaOps = Long.parseLong(v);
      case "meta-secs" -> metaSecs = Double.parseDouble(v);
      case "meta-only" -> metaOnly = MetaWorkload.withNeeds(List.of(v.split(",")));
      case "list-size" -> listSize = Integer.parseInt(v);
      case "tree-files" -> treeFiles = Long.parseLong(v);
      case "tree-dir-files" -> treeDirFiles = Integer.parseInt(v);
      case "big-dir" -> bigDir = Integer.parseInt(v);
      case "prep-threads" -> prepThreads = Integer.parseInt(v);
      case "tree-repeat" -> treeRepeat = Integer.parseInt(v);
      case "io-files" -> ioFiles = Integer.parseInt(v);
      case "io-size" -> ioSize = bytes(v);
      case "io-buffer" -> ioBuffer = (int) bytes(v);
      case "io-rounds" -> ioRounds = Integer.parseInt(v);
      case "io-huge-files" -> ioHugeFiles = Integer.parseInt(v);
      case "io-huge-size" -> ioHugeSize = bytes(v);
      case "io-huge-targets" -> ioHugeTargets = List.of(v.split(","));
      case "io-only" -> ioOnly = List.of(v.split(","));
      case "small-files" -> smallFiles = Integer.parseInt(v);
      case "small-size" -> smallSize = bytes(v);
      case "small-threads" -> smallThreads = Integer.parseInt(v);
      case "cache-dirs" -> cacheDirs = Integer.parseInt(v);
      case "cache-files" -> cacheFiles = Integer.parseInt(v);
      case "cache-file-size" -> cacheFileSize = bytes(v);
      case "cache-writer" -> cacheWriter = v;
      case "out" -> out = v;
      default -> throw new IllegalArgumentException("unknown flag --" + name);
    }
  }

  /** The parameters as key, value pairs, for the results' header. */
  Map<String, String> describe() {
    Map<String, String> m = new LinkedHashMap<>();
    targets.forEach((k, v) -> m.put("target." + k, v));
    m.put("dir", dir);
    m.put("sections", String.join(",", sections));
    m.put("threads", threads.toString().replaceAll("[\\[\\] ]", ""));
    m.put("meta-ops", Long.toString(metaOps));
    m.put("meta-secs", Double.toString(metaSecs));
    if (!metaOnly.isEmpty()) {
      m.put("meta-only", String.join(",", metaOnly));
    }
    m.put("list-size", Integer.toString(listSize));
    m.put("tree-files", Long.toString(treeFiles));
    m.put("tree-dir-files", Integer.toString(treeDirFiles));
    m.put("big-dir", Integer.toString(bigDir));
    m.put("prep-threads", Integer.toString(prepThreads));
    m.put("tree-repeat", Integer.toString(treeRepeat));
    m.put("io-files", Integer.toString(ioFiles));
    m.put("io-size", size(ioSize));
    m.put("io-buffer", size(ioBuffer));
    m.put("io-rounds", Integer.toString(ioRounds));
    if (ioHugeFiles > 0) {
      m.put("io-huge", ioHugeFiles + " x " + size(ioHugeSize));
      if (!ioHugeTargets.isEmpty()) {
        m.put("io-huge-targets", String.join(",", ioHugeTargets));
      }
    }
    if (!ioOnly.isEmpty()) {
      m.put("io-only", String.join(",", ioOnly));
    }
    m.put("small-files", Integer.toString(smallFiles));
    m.put("small-size", size(smallSize));
    m.put("small-threads", Integer.toString(smallThreads));
    if (sections.contains("cache")) {
      m.put("cache-dirs", Integer.toString(cacheDirs));
      m.put("cache-files", Integer.toString(cacheFiles));
      m.put("cache-file-size", size(cacheFileSize));
      m.put("cache-writer", cacheWriter == null ? "(last target)" : cacheWriter);
    }
    conf.forEach((k, v) -> m.put("conf." + k, v));
    targetConf.forEach((t, c) -> c.forEach((k, v) -> m.put("conf." + t + "." + k, v)));
    return m;
  }

  private static String[] pair(String v) {
    int eq = v.indexOf('=');
    if (eq <= 0) {
      throw new IllegalArgumentException("expected key=value, got " + v);
    }
    return new String[] {v.substring(0, eq), v.substring(eq + 1)};
  }

  private static List<Integer> ints(String v) {
    List<Integer> out = new ArrayList<>();
    for (String s : v.split(",")) {
      out.add(Integer.parseInt(s.trim()));
    }
    return List.copyOf(out);
  }

  /** Parses 4096, 64k, 64KiB, 256m, 256MiB, 1g, 1GiB (binary units). */
  static long bytes(String v) {
    String s = v.trim().toLowerCase(Locale.ROOT).replace("ib", "").replace("b", "");
    long mult = 1;
    if (s.endsWith("k")) {
      mult = 1L << 10;
    } else if (s.endsWith("m")) {
      mult = 1L << 20;
    } else if (s.endsWith("g")) {
      mult = 1L << 30;
    }
    if (mult != 1) {
      s = s.substring(0, s.length() - 1);
    }
    return Long.parseLong(s) * mult;
  }

  /** The shortest exact binary-unit spelling of a size: 512B, 64KiB, 256MiB. */
  static String size(long n) {
    String[] units = {"GiB", "MiB", "KiB"};
    int[] shifts = {30, 20, 10};
    for (int i = 0; i < units.length; i++) {
      long unit = 1L << shifts[i];
      if (n >= unit && n % unit == 0) {
        return (n / unit) + units[i];
      }
    }
    return n + "B";
  }
}
