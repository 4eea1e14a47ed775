package io.strata.bench;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A file system under test: its label in the results, its own FileSystem instance (not Hadoop's
 * shared cache) and the directory the benchmark owns in it.
 */
final class Target implements Closeable {
  final String label;
  final FileSystem fs;
  final Path base;
  /** The target's server processes on this host, whose CPU time each phase reports. */
  final List<Long> serverPids;
  /** The configuration its file system was opened with. */
  final Configuration conf;

  private Target(String label, FileSystem fs, Path base, List<Long> serverPids,
      Configuration conf) {
    this.label = label;
    this.fs = fs;
    this.base = base;
    this.serverPids = serverPids;
    this.conf = conf;
  }

  /** Opens {@code uri} and empties {@code dir} in it, relative to the URI's path. */
  static Target open(String label, String uri, String dir, List<Long> serverPids,
      Configuration conf) throws IOException {
    FileSystem fs = FileSystem.newInstance(URI.create(uri), conf);
    String rel = dir.replaceFirst("^/+", "");
    Path base = fs.makeQualified(rel.isEmpty() ? new Path(uri) : new Path(new Path(uri), rel));
    if (fs.exists(base)) {
      System.err.printf("fsbench: %s: deleting %s from an earlier run%n", label, base);
      fs.delete(base, true);
    }
    if (!fs.mkdirs(base)) {
      throw new IOException("cannot create " + base);
    }
    return new Target(label, fs, base, List.copyOf(serverPids), conf);
  }

  /** A path under the benchmark's directory. */
  Path path(String rel) {
    return new Path(base, rel);
  }

  @Override
  public void close() throws IOException {
    fs.close();
  }

  @Override
  public String toString() {
    return label + " (" + base + ")";
  }
}
