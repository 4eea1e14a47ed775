package io.strata.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Throughput, TestDFSIO-style: {@code --io-files} files of {@code --io-size} written in parallel
 * (one thread each, {@code --io-buffer} at a time) and then read back the same way, {@code
 * --io-rounds} times; then, with {@code --io-huge-files}, files of {@code --io-huge-size} the same
 * way (each target of {@code --io-huge-targets} writes, reads and deletes its own in turn, so
 * that only one target's are on the disk at a time); then {@code --small-files} files of {@code --small-size} written and read
 * by {@code --small-threads} threads, once. MB/s is all the bytes over the phase's wall time.
 *
 * <p>Each phase runs on every target in turn, the order reversed from one phase (and round) to
 * the next. A large or huge row is the median round by MB/s; its detail lists every round's
 * MB/s, the slowest over the fastest, and the CPU seconds per GB (10^9 bytes) the client and the
 * target's servers spent, the steadiest figure on a shared machine. Reads check the length of
 * what they read.
 */
final class IoWorkload {
  private final Params p;
  private final List<Target> targets;
  private final Consumer<Row> out;
  private final byte[] data;
  private int turn;

  IoWorkload(Params p, List<Target> targets, Consumer<Row> out) {
    this.p = p;
    this.targets = targets;
    this.out = out;
    // Incompressible, so that no layer gains by compressing.
    data = new byte[(int) Math.max(p.ioBuffer, p.smallSize)];
    new Random(42).nextBytes(data);
  }

  /** One round of one phase on one target. */
  private record Round(Phase.Stats stats, double mbPerSec, double cpuPerGb, String cpu) {}

  void run() throws IOException {
    String large = p.ioFiles + " x " + Params.size(p.ioSize);
    Map<String, List<Round>> rounds = new LinkedHashMap<>();
    for (int r = 0; r < p.ioRounds; r++) {
      for (String op : List.of("write large", "read large")) {
        for (Target t : inTurn()) {
          rounds.computeIfAbsent(t.label + "\t" + op, k -> new ArrayList<>())
              .add(phase(t, op, p.ioFiles, p.ioFiles, p.ioSize, "io/large"));
        }
      }
      for (Target t : targets) {
        t.fs.delete(t.path("io/large"), true);
      }
    }
    report(rounds, p.ioFiles, large);
    if (p.ioHugeFiles > 0) {
      String huge = p.ioHugeFiles + " x " + Params.size(p.ioHugeSize);
      rounds.clear();
      for (int r = 0; r < p.ioRounds; r++) {
        for (Target t : inTurn()) {
          if (!p.ioHugeTargets.isEmpty() && !p.ioHugeTargets.contains(t.label)) {
            continue;
          }
          for (String op : List.of("write huge", "read huge")) {
            rounds.computeIfAbsent(t.label + "\t" + op, k -> new ArrayList<>())
                .add(phase(t, op, p.ioHugeFiles, p.ioHugeFiles, p.ioHugeSize, "io/huge"));
          }
          t.fs.delete(t.path("io/huge"), true);
        }
      }
      report(rounds, p.ioHugeFiles, huge);
    }
    String small = p.smallFiles + " x " + Params.size(p.smallSize);
    for (String op : List.of("write small", "read small")) {
      for (Target t : inTurn()) {
        Round r = phase(t, op, p.smallThreads, p.smallFiles, p.smallSize, "io/small");
        out.accept(Row.of(t.label, "io", op, p.smallThreads, r.stats, r.stats.count()
            * p.smallSize, Cpu.detail(small, r.cpu)));
      }
    }
  }

  /** The targets in this turn's order: as given, then reversed, and so on. */
  private List<Target> inTurn() {
    List<Target> l = new ArrayList<>(targets);
    if (turn++ % 2 == 1) {
      java.util.Collections.reverse(l);
    }
    return l;
  }

  /** Runs one phase of {@code op} on {@code t}: {@code files} files of {@code size} in dir. */
  private Round phase(Target t, String op, int threads, long files, long size, String dir)
      throws IOException {
    Path d = t.path(dir);
    Cpu.Mark cpu = Cpu.Mark.of(t);
    Phase.Stats s = Phase.run(t.label + " " + op, threads, Phase.split(files, threads),
        Long.MAX_VALUE, (th, i) -> {
          Path f = new Path(d, "f" + (i * threads + th));
          return op.startsWith("write") ? write(t.fs, f, size) : read(t.fs, f) == size;
        });
    Cpu.Mark end = Cpu.Mark.of(t);
    double bytes = (double) s.count() * size;
    double cpuSecs = (end.server() - cpu.server()) + (end.client() - cpu.client());
    return new Round(s, bytes / 1e6 / s.secs(), cpuSecs / (bytes / 1e9), cpu.since(t));
  }

  /** Emits each target's and op's median round, with every round in its detail. */
  private void report(Map<String, List<Round>> rounds, int threads, String what) {
    for (Map.Entry<String, List<Round>> e : rounds.entrySet()) {
      String[] key = e.getKey().split("\t");
      List<Round> all = e.getValue();
      List<Round> sorted = new ArrayList<>(all);
      sorted.sort(Comparator.comparingDouble(Round::mbPerSec));
      Round median = sorted.get(sorted.size() / 2);
      String detail = String.format(Locale.ROOT, "%s; rounds %s MB/s, slowest/fastest %.2f; "
              + "cpu_s_per_GB=%.2f (rounds %s)", what,
          all.stream().map(r -> String.format(Locale.ROOT, "%.0f", r.mbPerSec))
              .collect(Collectors.joining("/")),
          sorted.get(0).mbPerSec / sorted.get(sorted.size() - 1).mbPerSec, median.cpuPerGb,
          all.stream().map(r -> String.format(Locale.ROOT, "%.2f", r.cpuPerGb))
              .collect(Collectors.joining("/")));
      out.accept(Row.of(key[0], "io", key[1], threads, median.stats,
          median.stats.count() * (key[1].endsWith("huge") ? p.ioHugeSize : p.ioSize),
          Cpu.detail(detail, median.cpu)));
    }
  }

  private boolean write(FileSystem fs, Path f, long size) throws IOException {
    int chunk = (int) Math.min(p.ioBuffer, size);
    try (OutputStream o = fs.create(f, false, p.ioBuffer)) {
      for (long left = size; left > 0; left -= chunk) {
        o.write(data, 0, (int) Math.min(chunk, left));
      }
    }
    return true;
  }

  private long read(FileSystem fs, Path f) throws IOException {
    byte[] buf = new byte[p.ioBuffer];
    long n = 0;
    try (InputStream in = fs.open(f, p.ioBuffer)) {
      for (int r; (r = in.read(buf)) >= 0; ) {
        n += r;
      }
    }
    return n;
  }
}
