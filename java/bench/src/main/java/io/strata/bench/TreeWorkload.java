package io.strata.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Operations on a large tree. Prepared first on every target (timed, reported as prepare rows):
 * {@code tree/} holds {@code --tree-files} empty files, {@code --tree-dir-files} per leaf
 * directory, the leaves nested two levels deep ({@code tree/<i/100>/<i%100>/f<j>}); {@code big/}
 * holds {@code --big-dir} empty files in one directory. Then, {@code --tree-repeat} times, each
 * operation on each target in turn (the median is reported):
 *
 * <ul>
 *   <li>ls -R of tree/: what {@code hadoop fs -ls -R} does without formatting the output, one
 *       thread walking depth first with listStatusIterator per directory;
 *   <li>du -s and count of tree/: {@code hadoop fs -du -s} and {@code hadoop fs -count} through
 *       FsShell (a getContentSummary each), their output checked against the tree;
 *   <li>listStatus of big/ (one call; the client pages through it).
 * </ul>
 */
final class TreeWorkload {
  private final Params p;
  private final List<Target> targets;
  private final Consumer<Row> out;

  TreeWorkload(Params p, List<Target> targets, Consumer<Row> out) {
    this.p = p;
    this.targets = targets;
    this.out = out;
  }

  long leafDirs() {
    return (p.treeFiles + p.treeDirFiles - 1) / p.treeDirFiles;
  }

  Path leaf(Target t, long i) {
    return t.path("tree/" + (i / 100) + "/" + (i % 100));
  }

  void run() throws IOException {
    for (Target t : targets) {
      prepare(t);
    }
    String[] ops = {"ls -R", "du -s", "count", "list 1 dir"};
    double[][][] secs = new double[ops.length][targets.size()][p.treeRepeat];
    String[][] cpu = new String[ops.length][targets.size()];
    long[][] seen = new long[ops.length][targets.size()];
    long[][] errors = new long[ops.length][targets.size()];
    for (Target t : targets) {
      shell(t, "-count", t.base.toString()); // FsShell's first use loads its commands
    }
    for (int rep = 0; rep < p.treeRepeat; rep++) {
      for (int o = 0; o < ops.length; o++) {
        for (int j = 0; j < targets.size(); j++) {
          int ti = ((rep + o) % 2 == 0) ? j : targets.size() - 1 - j;
          Target t = targets.get(ti);
          Cpu.Mark mark = Cpu.Mark.of(t);
          long start = System.nanoTime();
          long n = measure(ops[o], t);
          cpu[o][ti] = mark.since(t);
          secs[o][ti][rep] = (System.nanoTime() - start) / 1e9;
          long want = expected(ops[o]);
          if (n != want) {
            System.err.printf("fsbench: %s %s: saw %d, expected %d%n", t.label, ops[o], n, want);
            errors[o][ti]++;
          }
          seen[o][ti] = n;
          System.err.printf("fsbench: %s %s: %.3f s (%d)%n", t.label, ops[o], secs[o][ti][rep], n);
        }
      }
    }
    for (int o = 0; o < ops.length; o++) {
      for (int ti = 0; ti < targets.size(); ti++) {
        double[] s = secs[o][ti].clone();
        Arrays.sort(s);
        String detail = Cpu.detail("median of " + s.length + ": " + fmt(s), cpu[o][ti]);
        out.accept(Row.timed(targets.get(ti).label, ops[o], seen[o][ti], errors[o][ti],
            s[s.length / 2], detail));
      }
    }
  }

  /** Runs op on t and returns what it counted: entries, bytes (du) or files (count). */
  private long measure(String op, Target t) throws IOException {
    Path tree = t.path("tree");
    return switch (op) {
      case "ls -R" -> walk(t.fs, tree);
      case "du -s" -> Long.parseLong(field(shell(t, "-du", "-s", tree.toString()), 0));
      case "count" -> Long.parseLong(field(shell(t, "-count", tree.toString()), 1));
      case "list 1 dir" -> t.fs.listStatus(t.path("big")).length;
      default -> throw new IllegalArgumentException(op);
    };
  }

  /** What op should count on the prepared tree (du: bytes, and the files are empty). */
  private long expected(String op) {
    return switch (op) {
      case "ls -R" -> p.treeFiles + leafDirs() + (leafDirs() + 99) / 100;
      case "du -s" -> 0;
      case "count" -> p.treeFiles;
      default -> p.bigDir;
    };
  }

  private static String field(String output, int i) {
    return output.trim().split("\\s+")[i];
  }

  /** Every entry under root, depth first, as ls -R lists them. */
  static long walk(FileSystem fs, Path root) throws IOException {
    long n = 0;
    Deque<Path> dirs = new ArrayDeque<>();
    dirs.push(root);
    while (!dirs.isEmpty()) {
      RemoteIterator<FileStatus> it = fs.listStatusIterator(dirs.pop());
      List<Path> sub = new ArrayList<>();
      while (it.hasNext()) {
        FileStatus st = it.next();
        n++;
        if (st.isDirectory()) {
          sub.add(st.getPath());
        }
      }
      for (int i = sub.size() - 1; i >= 0; i--) {
        dirs.push(sub.get(i));
      }
    }
    return n;
  }

  /** Runs a {@code hadoop fs} command and returns what it printed. */
  private String shell(Target t, String... args) throws IOException {
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int rc;
    try (PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      System.setOut(capture);
      FsShell shell = new FsShell(t.conf);
      rc = shell.run(args);
      shell.close();
    } catch (Exception e) {
      throw new IOException(t.label + ": hadoop fs " + String.join(" ", args) + ": " + e, e);
    } finally {
      System.setOut(saved);
    }
    if (rc != 0) {
      throw new IOException(t.label + ": hadoop fs " + String.join(" ", args) + " exited " + rc);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  private void prepare(Target t) throws IOException {
    long dirs = leafDirs();
    int threads = p.prepThreads;
    Cpu.Mark cpu = Cpu.Mark.of(t);
    Phase.Stats sd = Phase.run(t.label + " prepare dirs", threads, Phase.split(dirs, threads),
        Long.MAX_VALUE, (th, i) -> t.fs.mkdirs(leaf(t, stripe(i, th, threads))));
    out.accept(Row.of(t.label, "tree", "prepare: mkdirs", threads, sd, 0,
        Cpu.detail(dirs + " leaf directories", cpu.since(t))));
    cpu = Cpu.Mark.of(t);
    long per = p.treeDirFiles;
    Phase.Stats sf = Phase.run(t.label + " prepare tree", threads,
        Phase.split(p.treeFiles, threads), Long.MAX_VALUE, (th, i) -> {
          long f = stripe(i, th, threads);
          t.fs.create(new Path(leaf(t, f / per), "f" + (f % per)), false).close();
          return true;
        });
    out.accept(Row.of(t.label, "tree", "prepare: create", threads, sf, 0,
        Cpu.detail(p.treeFiles + " empty files", cpu.since(t))));
    cpu = Cpu.Mark.of(t);
    Path big = t.path("big");
    t.fs.mkdirs(big);
    Phase.Stats sb = Phase.run(t.label + " prepare big dir", threads,
        Phase.split(p.bigDir, threads), Long.MAX_VALUE, (th, i) -> {
          t.fs.create(new Path(big, "f" + stripe(i, th, threads)), false).close();
          return true;
        });
    out.accept(Row.of(t.label, "tree", "prepare: create in 1 dir", threads, sb, 0,
        Cpu.detail(p.bigDir + " empty files", cpu.since(t))));
    if (sd.errors() + sf.errors() + sb.errors() > 0) {
      throw new IOException(t.label + ": preparing the tree failed");
    }
  }

  /** Thread th's i-th item when items are dealt round-robin to the threads. */
  static long stripe(long i, int th, int threads) {
    return i * threads + th;
  }

  private static String fmt(double[] s) {
    StringBuilder b = new StringBuilder();
    for (double v : s) {
      b.append(b.length() == 0 ? "" : " ").append(String.format(java.util.Locale.ROOT, "%.3f", v));
    }
    return b.toString();
  }
}
