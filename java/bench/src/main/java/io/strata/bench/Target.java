package io.strata.bench;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
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

  private Target(String label, FileSystem fs, Path base) {
    this.label = label;
    this.fs = fs;
    this.base = base;
  }

  /** Opens {@code uri} and empties {@code dir} in it, relative to the URI's path. */
  static Target open(String label, String uri, String dir, Configuration conf)
      throws IOException {
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
    return new Target(label, fs, base);
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
