package io.strata.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Throughput, TestDFSIO-style: {@code --io-files} files of {@code --io-size} written in parallel
 * (one thread each, {@code --io-buffer} at a time) and then read back the same way; then
 * {@code --small-files} files of {@code --small-size} written and read by
 * {@code --small-threads} threads. MB/s is all the bytes over the phase's wall time. Each phase
 * runs on every target in turn; reads check the length of what they read.
 */
final class IoWorkload {
  private final Params p;
  private final List<Target> targets;
  private final Consumer<Row> out;
  private final byte[] data;

  IoWorkload(Params p, List<Target> targets, Consumer<Row> out) {
    this.p = p;
    this.targets = targets;
    this.out = out;
    // Incompressible, so that no layer gains by compressing.
    data = new byte[(int) Math.max(p.ioBuffer, p.smallSize)];
    new Random(42).nextBytes(data);
  }

  void run() {
    String large = p.ioFiles + " x " + Params.size(p.ioSize);
    String small = p.smallFiles + " x " + Params.size(p.smallSize);
    int k = 0;
    for (String op : List.of("write large", "read large", "write small", "read small")) {
      boolean isLarge = op.endsWith("large");
      int threads = isLarge ? p.ioFiles : p.smallThreads;
      long files = isLarge ? p.ioFiles : p.smallFiles;
      long size = isLarge ? p.ioSize : p.smallSize;
      for (int j = 0; j < targets.size(); j++) {
        Target t = targets.get(k % 2 == 0 ? j : targets.size() - 1 - j);
        Path dir = t.path(isLarge ? "io/large" : "io/small");
        Cpu.Mark cpu = Cpu.Mark.of(t);
        Phase.Stats s = Phase.run(t.label + " " + op, threads, Phase.split(files, threads),
            Long.MAX_VALUE, (th, i) -> {
              Path f = new Path(dir, "f" + (i * threads + th));
              return op.startsWith("write") ? write(t.fs, f, size) : read(t.fs, f) == size;
            });
        out.accept(Row.of(t.label, "io", op, threads, s, s.count() * size,
            Cpu.detail(isLarge ? large : small, cpu.since(t))));
      }
      k++;
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
