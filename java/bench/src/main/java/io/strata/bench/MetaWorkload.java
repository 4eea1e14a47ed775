package io.strata.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * NNBench-style metadata operations through the FileSystem API, at each thread count: every
 * thread works in its own directory, on its own numbered files. The phases, in order, each run
 * on every target in turn before the next phase starts (so that both see the same machine):
 *
 * <ul>
 *   <li>create_write_0: create + close of an empty file {@code f<i>};
 *   <li>create_write_512: create + write 512 bytes + close of {@code s<i>};
 *   <li>open_read: open + read to the end + close of {@code s<i>};
 *   <li>getFileStatus of {@code f<i>};
 *   <li>listStatus of one shared directory of {@code --list-size} files;
 *   <li>rename of {@code f<i>} to {@code r<i>} (same directory);
 *   <li>delete of {@code r<i>};
 *   <li>mkdirs of a new {@code d<i>}.
 * </ul>
 *
 * A phase has {@code --meta-ops} operations split among its threads and a time limit
 * ({@code --meta-secs}); the phases that use earlier phases' files use as many as were made.
 */
final class MetaWorkload {
  static final int SMALL = 512;
  static final List<String> OPS = List.of("create_write_0", "create_write_512", "open_read",
      "getFileStatus", "listStatus", "rename", "delete", "mkdirs");
  /** The phase whose files each phase uses. */
  private static final Map<String, String> NEEDS = Map.of("open_read", "create_write_512",
      "getFileStatus", "create_write_0", "rename", "create_write_0", "delete", "rename");

  /**
   * The phases {@code ops} ({@code --meta-only}) and those whose files they use, in the order
   * they run.
   *
   * @throws IllegalArgumentException for an unknown phase
   */
  static List<String> withNeeds(List<String> ops) {
    Set<String> want = new HashSet<>();
    for (String op : ops) {
      if (!OPS.contains(op.trim())) {
        throw new IllegalArgumentException("--meta-only: unknown phase " + op + ", want " + OPS);
      }
      for (String o = op.trim(); o != null; o = NEEDS.get(o)) {
        want.add(o);
      }
    }
    return OPS.stream().filter(want::contains).toList();
  }

  private final Params p;
  private final List<Target> targets;
  private final Consumer<Row> out;
  private final byte[] payload = new byte[SMALL];

  MetaWorkload(Params p, List<Target> targets, Consumer<Row> out) {
    this.p = p;
    this.targets = targets;
    this.out = out;
    for (int i = 0; i < SMALL; i++) {
      payload[i] = (byte) ('a' + i % 26);
    }
  }

  /** The files a target's threads made in one round, per thread. */
  private static final class Round {
    final Path[] dirs;
    long[] created0;
    long[] created512;
    long[] renamed;

    Round(Path[] dirs) {
      this.dirs = dirs;
    }
  }

  void run() throws IOException {
    for (Target t : targets) {
      prepareListDir(t);
      warmUp(t);
    }
    int k = 0;
    for (int threads : p.threads) {
      List<Round> rounds = new ArrayList<>();
      for (Target t : targets) {
        rounds.add(startRound(t, threads));
      }
      for (String op : p.metaOnly.isEmpty() ? OPS : p.metaOnly) {
        // Alternate which target goes first, so that neither always runs on a warmer machine.
        for (int j = 0; j < targets.size(); j++) {
          int ti = (k % 2 == 0) ? j : targets.size() - 1 - j;
          Target t = targets.get(ti);
          Cpu.Mark cpu = Cpu.Mark.of(t);
          Phase.Stats s = phase(op, t, rounds.get(ti), threads);
          long bytes = op.equals("create_write_512") || op.equals("open_read") ? s.count() * SMALL
              : 0;
          out.accept(Row.of(t.label, "meta", op, threads, s, bytes, cpu.since(t)));
        }
        k++;
      }
    }
  }

  private Round startRound(Target t, int threads) throws IOException {
    Path[] dirs = new Path[threads];
    for (int i = 0; i < threads; i++) {
      dirs[i] = t.path("meta/t" + threads + "/w" + i);
      if (!t.fs.mkdirs(dirs[i])) {
        throw new IOException("cannot create " + dirs[i]);
      }
    }
    return new Round(dirs);
  }

  private Phase.Stats phase(String op, Target t, Round r, int threads) {
    FileSystem fs = t.fs;
    long deadline = System.nanoTime() + (long) (p.metaSecs * 1e9);
    long[] ops = Phase.split(p.metaOps, threads);
    String name = t.label + " " + op + " x" + threads;
    Path list = t.path("meta/list");
    Path[] d = r.dirs;
    switch (op) {
      case "create_write_0" -> {
        Phase.Stats s = Phase.run(name, threads, ops, deadline, (th, i) -> {
          fs.create(new Path(d[th], "f" + i), false).close();
          return true;
        });
        r.created0 = s.done();
        return s;
      }
      case "create_write_512" -> {
        Phase.Stats s = Phase.run(name, threads, ops, deadline, (th, i) -> {
          try (OutputStream o = fs.create(new Path(d[th], "s" + i), false)) {
            o.write(payload);
          }
          return true;
        });
        r.created512 = s.done();
        return s;
      }
      case "open_read" -> {
        return Phase.run(name, threads, r.created512, deadline,
            (th, i) -> readAll(fs, new Path(d[th], "s" + i)) == SMALL);
      }
      case "getFileStatus" -> {
        return Phase.run(name, threads, r.created0, deadline,
            (th, i) -> fs.getFileStatus(new Path(d[th], "f" + i)).isFile());
      }
      case "listStatus" -> {
        return Phase.run(name, threads, ops, deadline,
            (th, i) -> fs.listStatus(list).length == p.listSize);
      }
      case "rename" -> {
        Phase.Stats s = Phase.run(name, threads, r.created0, deadline,
            (th, i) -> fs.rename(new Path(d[th], "f" + i), new Path(d[th], "r" + i)));
        r.renamed = s.done();
        return s;
      }
      case "delete" -> {
        return Phase.run(name, threads, r.renamed, deadline,
            (th, i) -> fs.delete(new Path(d[th], "r" + i), false));
      }
      case "mkdirs" -> {
        return Phase.run(name, threads, ops, deadline,
            (th, i) -> fs.mkdirs(new Path(d[th], "d" + i)));
      }
      default -> throw new IllegalArgumentException("unknown op " + op);
    }
  }

  static long readAll(FileSystem fs, Path path) throws IOException {
    byte[] buf = new byte[4096];
    long n = 0;
    try (InputStream in = fs.open(path)) {
      for (int r; (r = in.read(buf)) >= 0; ) {
        n += r;
      }
    }
    return n;
  }

  private void prepareListDir(Target t) throws IOException {
    Path list = t.path("meta/list");
    t.fs.mkdirs(list);
    for (int i = 0; i < p.listSize; i++) {
      t.fs.create(new Path(list, "e" + i), false).close();
    }
  }

  /** Untimed: a few hundred of each operation, so that JIT compilation and connections are done. */
  private void warmUp(Target t) throws IOException {
    FileSystem fs = t.fs;
    Path w = t.path("meta/warmup");
    fs.mkdirs(w);
    long[] ops = Phase.split(400, 8);
    Phase.run(t.label + " warm-up", 8, ops, Long.MAX_VALUE, (th, i) -> {
      Path f = new Path(w, th + "-" + i);
      try (OutputStream o = fs.create(f, false)) {
        o.write(payload);
      }
      FileStatus st = fs.getFileStatus(f);
      readAll(fs, f);
      fs.listStatus(t.path("meta/list"));
      Path g = new Path(w, th + "-" + i + ".r");
      fs.rename(f, g);
      fs.mkdirs(new Path(w, th + "-" + i + ".d"));
      return fs.delete(g, false) && st.getLen() == SMALL;
    });
    fs.delete(w, true);
  }
}
