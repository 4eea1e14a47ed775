package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.AlreadyBeingCreatedException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.EnumSet;
import org.apache.hadoop.HadoopIllegalArgumentException;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.Test;

/**
 * append (FileSystem.append, the APPEND create flag) and truncate through StrataFileSystem, as
 * HDFS answers them. Hadoop 3.4.2's test jar has no truncate contract suite; this is Strata's.
 */
public class TestStrataAppendTruncate extends StrataTestBase {
  private static final int MIB = 1 << 20;

  private static String repeat(char c, int n) {
    return String.valueOf(c).repeat(n);
  }

  @Test
  public void appendStartsAtTheEnd() throws IOException {
    Path f = new Path(base, "a");
    write(fs, f, "0123456789");
    try (FSDataOutputStream out = fs.append(f)) {
      assertEquals(10, out.getPos());
      out.write("abc".getBytes());
      assertEquals(13, out.getPos());
    }
    assertEquals("0123456789abc", read(fs, f));
    assertThrows(FileNotFoundException.class, () -> fs.append(new Path(base, "missing")));
    assertThrows(FileNotFoundException.class, () -> fs.append(base));
    try (FSDataOutputStream out = fs.append(f)) {
      assertThrows(AlreadyBeingCreatedException.class, () -> fs.append(f));
      out.write('!');
    }
    assertEquals("0123456789abc!", read(fs, f));
  }

  @Test
  public void createFlags() throws IOException {
    Path f = new Path(base, "flags");
    FsPermission perm = FsPermission.getFileDefault();
    EnumSet<CreateFlag> createAppend = EnumSet.of(CreateFlag.CREATE, CreateFlag.APPEND);
    try (FSDataOutputStream out = fs.create(f, perm, createAppend, 4096, (short) 1, MIB, null)) {
      out.write("new".getBytes()); // missing: created
    }
    try (FSDataOutputStream out = fs.createNonRecursive(f, perm, createAppend, 4096, (short) 1,
        MIB, null)) {
      out.write("+more".getBytes()); // there: appended
    }
    try (FSDataOutputStream out = fs.appendFile(f).build()) {
      out.write("+built".getBytes());
    }
    assertEquals("new+more+built", read(fs, f));
    assertThrows(FileNotFoundException.class, () -> fs.createNonRecursive(
        new Path(base, "none"), perm, EnumSet.of(CreateFlag.APPEND), 4096, (short) 1, MIB, null));
    assertThrows(HadoopIllegalArgumentException.class, () -> fs.createNonRecursive(f, perm,
        EnumSet.of(CreateFlag.APPEND, CreateFlag.OVERWRITE), 4096, (short) 1, MIB, null));
    try (FSDataOutputStream out = fs.createNonRecursive(f, perm,
        EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE), 4096, (short) 1, MIB, null)) {
      out.write("over".getBytes());
    }
    assertEquals("over", read(fs, f));
  }

  @Test
  public void truncate() throws IOException {
    Path f = new Path(base, "t");
    String content = repeat('a', MIB) + repeat('b', MIB) + repeat('c', 5000);
    try (FSDataOutputStream out = newFs("strata://default/", blocks()).create(f)) {
      out.write(content.getBytes());
    }
    for (int len : new int[] {MIB + 10, MIB, 7, 0}) {
      assertTrue(fs.truncate(f, len));
      assertEquals(len, fs.getFileStatus(f).getLen());
      assertEquals(content.substring(0, len), read(fs, f));
    }
    assertThrows(IllegalArgumentException.class, () -> fs.truncate(f, 1));
    assertThrows(HadoopIllegalArgumentException.class, () -> fs.truncate(f, -1));
    assertThrows(FileNotFoundException.class, () -> fs.truncate(new Path(base, "missing"), 0));
    assertThrows(FileNotFoundException.class, () -> fs.truncate(base, 0));
    try (FSDataOutputStream out = fs.append(f)) {
      out.write("again".getBytes());
      out.hflush();
      assertThrows(AlreadyBeingCreatedException.class, () -> fs.truncate(f, 0));
    }
    assertTrue(fs.truncate(f, 2));
    assertEquals("ag", read(fs, f));
  }

  private static org.apache.hadoop.conf.Configuration blocks() {
    org.apache.hadoop.conf.Configuration c = conf();
    c.set(StrataConfigKeys.BLOCK_SIZE, "1m");
    return c;
  }
}
