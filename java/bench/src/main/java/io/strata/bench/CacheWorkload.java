package io.strata.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.function.Consumer;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Metadata and small reads of one bucket's objects seen through several file systems: Strata in
 * cache mode ({@code strata://lake/}, a view of the bucket) beside S3A ({@code s3a://bucket/}) on
 * the same objects, the comparison of issue 18 ("getFileStatus and listStatus on a cached subtree
 * at least 10x faster than HeadObject/ListObjectsV2 against the same MinIO"). Every target must
 * show the same objects under the benchmark's directory: the URIs name one bucket (and prefix).
 *
 * <ol>
 *   <li>prepare: the writer target ({@code --cache-writer}, the last target by default) writes
 *       {@code cache/d<i>/f<j>}: {@code --cache-dirs} directories of {@code --cache-files}
 *       objects of {@code --cache-file-size} bytes each (the "existing data lake");
 *   <li>first pass: on every target in turn, a listing walk of {@code cache/} (one thread), then
 *       one read of every object ({@code --prep-threads} threads): for Strata, the cold pass
 *       that loads the subtree's metadata (lazily, one listing at a time) and its data into the
 *       workers' caches; then, untimed, some of each operation below (JIT, connections);
 *   <li>at each thread count, every phase on every target in turn (the order alternating):
 *       getFileStatus of an object; listStatus of a directory ({@code --cache-files} entries);
 *       open_read: open, read to the end and close an object.
 * </ol>
 *
 * Each phase has {@code --meta-ops} operations split among its threads and the time limit
 * {@code --meta-secs}; thread t's i-th operation is on item {@code i*threads+t}, round the
 * objects (or directories).
 */
final class CacheWorkload {
  static final List<String> OPS = List.of("getFileStatus", "listStatus", "open_read");

  private final Params p;
  private final List<Target> targets;
  private final Consumer<Row> out;

  CacheWorkload(Params p, List<Target> targets, Consumer<Row> out) {
    this.p = p;
    this.targets = targets;
    this.out = out;
  }

  void run() throws IOException {
    Target writer = writer();
    populate(writer);
    for (Target t : targets) {
      firstPass(t);
    }
    for (Target t : targets) {
      warmUp(t);
    }
    int k = 0;
    for (int threads : p.threads) {
      for (String op : OPS) {
        for (int j = 0; j < targets.size(); j++) {
          Target t = targets.get(k % 2 == 0 ? j : targets.size() - 1 - j);
          Cpu.Mark cpu = Cpu.Mark.of(t);
          Phase.Stats s = phase(op, t, threads);
          long bytes = op.equals("open_read") ? s.count() * p.cacheFileSize : 0;
          out.accept(Row.of(t.label, "cache", op, threads, s, bytes, cpu.since(t)));
        }
        k++;
      }
    }
  }

  private Target writer() {
    String label = p.cacheWriter != null ? p.cacheWriter : targets.get(targets.size() - 1).label;
    for (Target t : targets) {
      if (t.label.equals(label)) {
        return t;
      }
    }
    throw new IllegalArgumentException("--cache-writer " + label + " is not a target");
  }

  private long objects() {
    return (long) p.cacheDirs * p.cacheFiles;
  }

  private Path dir(Target t, long d) {
    return t.path("cache/d" + d);
  }

  private Path object(Target t, long i) {
    return new Path(dir(t, i / p.cacheFiles), "f" + (i % p.cacheFiles));
  }

  private void populate(Target t) throws IOException {
    byte[] payload = new byte[(int) p.cacheFileSize];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) ('a' + i % 26);
    }
    int threads = p.prepThreads;
    Cpu.Mark cpu = Cpu.Mark.of(t);
    Phase.Stats s = Phase.run(t.label + " prepare objects", threads,
        Phase.split(objects(), threads), Long.MAX_VALUE, (th, i) -> {
          try (OutputStream o = t.fs.create(object(t, TreeWorkload.stripe(i, th, threads)),
              false)) {
            o.write(payload);
          }
          return true;
        });
    out.accept(Row.of(t.label, "cache", "prepare: write objects", threads, s,
        s.count() * p.cacheFileSize, Cpu.detail(objects() + " objects of "
            + Params.size(p.cacheFileSize) + " in " + p.cacheDirs + " directories",
            cpu.since(t))));
    if (s.errors() > 0) {
      throw new IOException(t.label + ": writing the objects failed");
    }
  }

  /**
   * A listing walk of cache/ (one thread, as {@code hadoop fs -ls -R}), then one read of every
   * object ({@code --prep-threads} threads): for Strata, the cold pass.
   */
  private void firstPass(Target t) throws IOException {
    Cpu.Mark cpu = Cpu.Mark.of(t);
    long start = System.nanoTime();
    long entries = TreeWorkload.walk(t.fs, t.path("cache"));
    double secs = (System.nanoTime() - start) / 1e9;
    long want = objects() + p.cacheDirs;
    if (entries != want) {
      System.err.printf("fsbench: %s first walk: saw %d entries, expected %d%n", t.label,
          entries, want);
    }
    out.accept(Row.timed(t.label, "first walk", entries, entries == want ? 0 : 1, secs,
        cpu.since(t)).in("cache"));
    int threads = p.prepThreads;
    cpu = Cpu.Mark.of(t);
    Phase.Stats s = Phase.run(t.label + " first read", threads, Phase.split(objects(), threads),
        Long.MAX_VALUE, (th, i) -> MetaWorkload.readAll(t.fs,
            object(t, TreeWorkload.stripe(i, th, threads))) == p.cacheFileSize);
    out.accept(Row.of(t.label, "cache", "first read", threads, s, s.count() * p.cacheFileSize,
        cpu.since(t)));
  }

  /** Untimed: some of each operation, so that JIT compilation and connections are done. */
  private void warmUp(Target t) {
    long[] ops = Phase.split(400, 8);
    for (String op : OPS) {
      Phase.run(t.label + " warm-up " + op, 8, ops, Long.MAX_VALUE, op(op, t, 8));
    }
  }

  private Phase.Stats phase(String op, Target t, int threads) {
    long deadline = System.nanoTime() + (long) (p.metaSecs * 1e9);
    return Phase.run(t.label + " cache " + op + " x" + threads, threads,
        Phase.split(p.metaOps, threads), deadline, op(op, t, threads));
  }

  /** Operation {@code op} on target t by thread th of {@code threads}. */
  private Phase.Op op(String op, Target t, int threads) {
    FileSystem fs = t.fs;
    long n = objects();
    return switch (op) {
      case "getFileStatus" -> (th, i) ->
          fs.getFileStatus(object(t, TreeWorkload.stripe(i, th, threads) % n)).isFile();
      case "listStatus" -> (th, i) ->
          fs.listStatus(dir(t, TreeWorkload.stripe(i, th, threads) % p.cacheDirs)).length
              == p.cacheFiles;
      case "open_read" -> (th, i) ->
          MetaWorkload.readAll(fs, object(t, TreeWorkload.stripe(i, th, threads) % n))
              == p.cacheFileSize;
      default -> throw new IllegalArgumentException("unknown op " + op);
    };
  }
}
