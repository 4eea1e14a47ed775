package io.strata.compat;

import java.io.File;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * DistCp between HDFS and Strata, timed against HDFS to HDFS in the same run, and
 * getFileChecksum of a large file on both (docs/benchmarks.md, "DistCp and checksums").
 *
 * <p>HDFS is a MiniDFSCluster in this JVM; Strata is the service at {@code --meta} (the
 * superuser's token in {@code STRATA_TOKEN_FILE}); DistCp runs on the local job runner with
 * {@code --maps} maps at a time. It writes {@code --files} files of random sizes (most a few
 * KiB, as a warehouse's small files, one in a hundred a MiB or more) in directories of 100 into
 * HDFS, then, in each of {@code --rounds} rounds: DistCp {@code -update -pugpt} HDFS to HDFS,
 * HDFS to Strata and Strata back to HDFS (each into a fresh directory), then each again (the
 * second {@code -update}, which compares every file's checksum and copies nothing). Before the
 * copies it writes the same {@code --big} bytes into both and times getFileChecksum
 * (COMPOSITE_CRC) {@code --sums} times on each, alternating ({@code --big 0}: not). Prints one table per part, with ratios to HDFS.
 *
 * <pre>
 * java -cp ... io.strata.compat.DistCpBench --meta HOST:PORT --base-dir DIR [--files 10000]
 *     [--maps 4] [--rounds 1] [--big 1g] [--sums 3]
 * </pre>
 */
public final class DistCpBench {
  private DistCpBench() {}

  public static void main(String[] args) throws Exception {
    String meta = null;
    String base = null;
    int files = 10_000;
    int maps = 4;
    int rounds = 1;
    long big = 1L << 30;
    int sums = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--meta" -> meta = args[++i];
        case "--base-dir" -> base = args[++i];
        case "--files" -> files = Integer.parseInt(args[++i]);
        case "--maps" -> maps = Integer.parseInt(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--big" -> big = parseSize(args[++i]);
        case "--sums" -> sums = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (meta == null || base == null) {
      throw new IllegalArgumentException("--meta and --base-dir are required");
    }
    String token = java.nio.file.Files.readString(
        java.nio.file.Path.of(System.getenv("STRATA_TOKEN_FILE"))).trim();
    try (Sides sides = Sides.start(new File(base, "hdfs"), 128L << 20, meta, token)) {
      Configuration conf = sides.conf();
      conf.setInt("mapreduce.local.map.tasks.maximum", maps);
      // HDFS's client asks the NameNode again after 20 ms, not its default 400, whether a file
      // it closed is complete: at the default each small file's close into HDFS sleeps 0.4 s,
      // which would be most of the copies into HDFS. This favours HDFS.
      conf.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 20);
      try (FileSystem hdfs = sides.hdfs(conf); FileSystem strata = sides.strata(conf)) {
        // The checksums first: the shorter part, whose table is printed even if the copies fail.
        if (big > 0) {
          checksums(hdfs, strata, big, sums);
        }
        long bytes = writeTree(hdfs, new Path("/bench/src"), files);
        System.err.printf("distcp-bench: %d files, %d bytes in HDFS%n", files, bytes);
        copies(sides, conf, files, bytes, maps, rounds);
      }
    }
  }

  private static long parseSize(String s) {
    String t = s.toLowerCase(Locale.ROOT);
    long unit = t.endsWith("g") ? 1L << 30 : t.endsWith("m") ? 1L << 20 : t.endsWith("k") ? 1L << 10
        : 1;
    return Long.parseLong(unit == 1 ? t : t.substring(0, t.length() - 1)) * unit;
  }

  /** Writes {@code n} files of random sizes under {@code root}, 8 at a time; returns bytes. */
  static long writeTree(FileSystem fs, Path root, int n) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Long>> done = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int first = t;
      done.add(pool.submit(() -> {
        Random r = new Random(first);
        long bytes = 0;
        byte[] buf = new byte[1 << 20];
        for (int i = first; i < n; i += 8) {
          int size = i % 100 == 0 ? (1 << 20) + r.nextInt(3 << 20) : r.nextInt(16 << 10);
          byte[] b = size <= buf.length ? buf : new byte[size];
          r.nextBytes(b);
          try (OutputStream out = fs.create(new Path(root, String.format("d%03d/f%05d", i / 100,
              i)))) {
            out.write(b, 0, size);
          }
          bytes += size;
        }
        return bytes;
      }));
    }
    long bytes = 0;
    for (Future<Long> f : done) {
      bytes += f.get();
    }
    pool.shutdown();
    return bytes;
  }

  private static void copies(Sides sides, Configuration conf, int files, long bytes, int maps,
      int rounds) throws Exception {
    String h = sides.hdfsUri().toString().replaceAll("/$", "");
    List<String[]> rows = new ArrayList<>();
    long[] totals = new long[6];
    for (int round = 1; round <= rounds; round++) {
      String[][] runs = {
          {"HDFS -> HDFS", h + "/bench/src", h + "/bench/hh" + round},
          {"HDFS -> Strata", h + "/bench/src", "strata://default/bench/hs" + round},
          {"Strata -> HDFS", "strata://default/bench/hs" + round, h + "/bench/sh" + round}};
      for (int again = 0; again < 2; again++) {
        for (int i = 0; i < runs.length; i++) {
          Copies.Result r = Copies.distcp(conf, "-update", "-pugpt", "-m", String.valueOf(maps),
              runs[i][1], runs[i][2]);
          totals[again * 3 + i] += r.millis();
          System.err.printf("distcp-bench: round %d, %s%s: %s%n", round, runs[i][0],
              again == 1 ? " (again)" : "", r);
        }
      }
    }
    String[] names = {"HDFS -> HDFS", "HDFS -> Strata", "Strata -> HDFS"};
    for (int again = 0; again < 2; again++) {
      double base = totals[again * 3] / (double) rounds;
      for (int i = 0; i < 3; i++) {
        double ms = totals[again * 3 + i] / (double) rounds;
        rows.add(new String[] {names[i] + (again == 1 ? ", -update again (nothing to copy)" : ""),
            String.format("%.1f", ms / 1000), String.format("%.0f", files / (ms / 1000)),
            String.format("%.2f", ms / base)});
      }
    }
    System.out.printf("%nDistCp -update -pugpt of %d files (%.1f MiB), %d maps, local job runner,"
        + " mean of %d round(s)%n", files, bytes / 1048576.0, maps, rounds);
    print(new String[] {"copy", "seconds", "files/s", "time vs HDFS -> HDFS"}, rows);
  }

  private static void checksums(FileSystem hdfs, FileSystem strata, long size, int runs)
      throws Exception {
    Path p = new Path("/bench/big");
    byte[] buf = new byte[8 << 20];
    Random r = new Random(9);
    try (OutputStream a = hdfs.create(p, true); OutputStream b = strata.create(p, true)) {
      for (long done = 0; done < size; done += buf.length) {
        int n = (int) Math.min(buf.length, size - done);
        r.nextBytes(buf);
        a.write(buf, 0, n);
        b.write(buf, 0, n);
      }
    }
    long[] h = new long[runs];
    long[] s = new long[runs];
    FileChecksum hs = null;
    FileChecksum ss = null;
    for (int i = 0; i < runs; i++) {
      long t0 = System.nanoTime();
      hs = hdfs.getFileChecksum(p);
      long t1 = System.nanoTime();
      ss = strata.getFileChecksum(p);
      long t2 = System.nanoTime();
      h[i] = t1 - t0;
      s[i] = t2 - t1;
    }
    if (!hs.equals(ss)) {
      throw new IllegalStateException("the checksums differ: HDFS " + hs + ", Strata " + ss);
    }
    // Its gigabyte thrice over (HDFS, the bucket, the cache) is not for the copies to share.
    hdfs.delete(p, false);
    strata.delete(p, false);
    java.util.Arrays.sort(h);
    java.util.Arrays.sort(s);
    double hm = h[runs / 2] / 1e6;
    double sm = s[runs / 2] / 1e6;
    System.out.printf("%ngetFileChecksum of a %d MiB file (%s, equal on both), median of %d%n",
        size >> 20, ss, runs);
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"HDFS (COMPOSITE_CRC)", String.format("%.1f", hm), "1.00"});
    rows.add(new String[] {"Strata", String.format("%.1f", sm), String.format("%.2f", sm / hm)});
    print(new String[] {"file system", "ms", "time vs HDFS"}, rows);
  }

  private static void print(String[] header, List<String[]> rows) {
    int[] w = new int[header.length];
    List<String[]> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    for (String[] row : all) {
      for (int i = 0; i < row.length; i++) {
        w[i] = Math.max(w[i], row[i].length());
      }
    }
    for (String[] row : all) {
      StringBuilder b = new StringBuilder("|");
      for (int i = 0; i < row.length; i++) {
        b.append(' ').append(i == 0 ? String.format("%-" + w[i] + "s", row[i])
            : String.format("%" + w[i] + "s", row[i])).append(" |");
      }
      System.out.println(b);
      if (row == header) {
        StringBuilder sep = new StringBuilder("|");
        for (int i = 0; i < row.length; i++) {
          sep.append(i == 0 ? " " + "-".repeat(w[i]) + " |" : " " + "-".repeat(w[i] - 1) + ": |");
        }
        System.out.println(sep);
      }
    }
  }

}
