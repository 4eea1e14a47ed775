package io.strata.compat;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.io.IOException;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.IOUtils;

/** A tree of varied files to copy, and the check that two trees are the same. */
final class Trees {
  private Trees() {}

  /**
   * Writes under {@code root} of {@code fs}: empty and one-byte files, files on either side of
   * Strata's inline limit, a file of several blocks, a name with a space and one with non-ASCII,
   * an empty directory, deep directories, files of other modes and of another owner and group,
   * and 40 files of random sizes; times set in the past.
   */
  static void make(FileSystem fs, Path root) throws IOException {
    Random r = new Random(42);
    write(fs, new Path(root, "empty"), 0, r);
    write(fs, new Path(root, "one"), 1, r);
    write(fs, new Path(root, "a/inline-4096"), 4096, r);
    write(fs, new Path(root, "a/past-inline-4097"), 4097, r);
    write(fs, new Path(root, "a/b/blocks"), 3 * (1 << 20) + 5, r);
    write(fs, new Path(root, "a/b/with space.txt"), 1234, r);
    write(fs, new Path(root, "a/b/naïve-ünïcode"), 2222, r);
    write(fs, new Path(root, "c/d/e/deep"), 12345, r);
    fs.mkdirs(new Path(root, "empty-dir"));
    Path secret = new Path(root, "secret");
    write(fs, secret, 777, r);
    fs.setPermission(secret, new FsPermission((short) 0600));
    Path owned = new Path(root, "c/owned");
    write(fs, owned, 4321, r);
    fs.setOwner(owned, "alice", "analysts");
    fs.setPermission(owned, new FsPermission((short) 0640));
    fs.setPermission(new Path(root, "c/d"), new FsPermission((short) 0750));
    for (int i = 0; i < 40; i++) {
      write(fs, new Path(root, String.format("many/f%02d", i)), r.nextInt(20_000), r);
    }
    long t = 1_700_000_000_000L;
    for (FileStatus st : walk(fs, root).values()) {
      if (st.isFile()) {
        fs.setTimes(st.getPath(), t += 1000, -1);
      }
    }
  }

  private static void write(FileSystem fs, Path p, int size, Random r) throws IOException {
    byte[] b = new byte[size];
    r.nextBytes(b);
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(b);
    }
  }

  /** Every entry under {@code root} (not root itself) by its path relative to root. */
  static Map<String, FileStatus> walk(FileSystem fs, Path root) throws IOException {
    Map<String, FileStatus> out = new TreeMap<>();
    walk(fs, fs.getFileStatus(root).getPath(), fs.getFileStatus(root).getPath(), out);
    return out;
  }

  private static void walk(FileSystem fs, Path root, Path dir, Map<String, FileStatus> out)
      throws IOException {
    for (FileStatus st : fs.listStatus(dir)) {
      String rel = st.getPath().toUri().getPath().substring(root.toUri().getPath().length() + 1);
      out.put(rel, st);
      if (st.isDirectory()) {
        walk(fs, root, st.getPath(), out);
      }
    }
  }

  /**
   * Checks that the tree under {@code b} in {@code bfs} is the tree under {@code a} in {@code
   * afs}: the same names, kinds, lengths, bytes, modes, owners and groups, and the files' times
   * of modification.
   */
  static void assertSame(FileSystem afs, Path a, FileSystem bfs, Path b) throws IOException {
    Map<String, FileStatus> want = walk(afs, a);
    Map<String, FileStatus> got = walk(bfs, b);
    assertEquals(a + " and " + b + ": the names", want.keySet(), got.keySet());
    for (Map.Entry<String, FileStatus> e : want.entrySet()) {
      FileStatus w = e.getValue();
      FileStatus g = got.get(e.getKey());
      String what = e.getKey() + " in " + b;
      assertEquals(what + ": kind", w.isDirectory(), g.isDirectory());
      assertEquals(what + ": mode", w.getPermission(), g.getPermission());
      assertEquals(what + ": owner", w.getOwner(), g.getOwner());
      assertEquals(what + ": group", w.getGroup(), g.getGroup());
      if (w.isFile()) {
        assertEquals(what + ": length", w.getLen(), g.getLen());
        assertEquals(what + ": modification time", w.getModificationTime(),
            g.getModificationTime());
        assertArrayEquals(what + ": bytes", read(afs, w.getPath()), read(bfs, g.getPath()));
      }
    }
  }

  private static byte[] read(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      byte[] b = new byte[(int) fs.getFileStatus(p).getLen()];
      IOUtils.readFully(in, b, 0, b.length);
      return b;
    }
  }
}
