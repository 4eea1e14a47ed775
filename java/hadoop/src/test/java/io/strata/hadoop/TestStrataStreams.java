package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import org.apache.hadoop.fs.CommonPathCapabilities;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StorageStatistics;
import org.apache.hadoop.fs.StreamCapabilities;
import org.junit.Test;

/** Reading and writing through StrataFileSystem: streams, Syncable, capabilities, statistics. */
public class TestStrataStreams extends StrataTestBase {
  private byte[] data(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i * 31 + 7);
    }
    return b;
  }

  @Test
  public void seekAndPositionedReads() throws IOException {
    Path f = new Path(base, "f");
    byte[] d = data(4096);
    try (FSDataOutputStream out = fs.create(f)) {
      out.write(d, 0, 1000);
      out.write(d, 1000, d.length - 1000);
      assertEquals(d.length, out.getPos());
    }
    try (FSDataInputStream in = fs.open(f)) {
      assertEquals(d.length, in.available());
      in.seek(4000);
      assertEquals(d[4000] & 0xff, in.read());
      assertEquals(4001, in.getPos());
      byte[] buf = new byte[100];
      in.readFully(10, buf);
      assertEquals("positioned reads leave the position", 4001, in.getPos());
      byte[] want = new byte[100];
      System.arraycopy(d, 10, want, 0, 100);
      assertArrayEquals(want, buf);
      assertEquals(50, in.read(4046, buf, 0, 100));
      assertThrows(EOFException.class, () -> in.readFully(4090, new byte[10]));
      assertThrows(EOFException.class, () -> in.seek(4097));
      assertThrows(EOFException.class, () -> in.seek(-1));
      in.seek(4096);
      assertEquals(-1, in.read());
      assertEquals(-1, in.read(new byte[4], 0, 4));
      assertEquals(0, in.read(new byte[4], 0, 0));
      in.seek(0);
      assertArrayEquals(d, in.readAllBytes());
    }
    FSDataInputStream closed = fs.open(f);
    closed.close();
    assertThrows(IOException.class, closed::read);
    assertThrows(IOException.class, () -> closed.seek(0));
  }

  @Test
  public void syncableIsDeclaredAndWorks() throws IOException {
    Path s = new Path(base, "s");
    try (FSDataOutputStream out = fs.create(s)) {
      assertTrue(out.hasCapability("hflush"));
      assertTrue(out.hasCapability("hsync"));
      assertFalse(out.hasCapability(StreamCapabilities.IOSTATISTICS));
      out.write('x');
      out.hflush();
      assertEquals("x", read(fs, s));
      out.write('y');
      out.hsync();
      assertEquals("xy", read(fs, s));
      out.flush();
    }
    try (FSDataInputStream in = fs.open(s)) {
      assertTrue(in.hasCapability(StreamCapabilities.UNBUFFER));
      assertFalse(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
      assertFalse(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER));
      assertFalse(in.hasCapability(StreamCapabilities.READAHEAD));
      assertTrue("parallel vectored reads", in.hasCapability(StreamCapabilities.VECTOREDIO));
    }
  }

  @Test
  public void unsupportedOperations() throws IOException {
    // Snapshots are not implemented (docs/semantics.md, "Not yet"): Hadoop's default answer.
    assertThrows(UnsupportedOperationException.class, () -> fs.createSnapshot(base, "s"));
  }

  @Test
  public void pathCapabilitiesAreHonest() throws IOException {
    for (String yes : new String[] {CommonPathCapabilities.FS_PERMISSIONS,
        CommonPathCapabilities.LEASE_RECOVERABLE, Capabilities.ATOMIC_RENAME,
        CommonPathCapabilities.FS_APPEND, CommonPathCapabilities.FS_TRUNCATE,
        CommonPathCapabilities.FS_CONCAT, CommonPathCapabilities.FS_CHECKSUMS}) {
      assertTrue(yes, fs.hasPathCapability(base, yes));
    }
    for (String no : new String[] {Capabilities.MARKER_AWARE, Capabilities.MARKER_POLICY_KEEP,
        Capabilities.MARKER_ACTION_KEEP, CommonPathCapabilities.VIRTUAL_BLOCK_LOCATIONS,
        CommonPathCapabilities.FS_SYMLINKS, CommonPathCapabilities.FS_SNAPSHOTS,
        CommonPathCapabilities.FS_ACLS, CommonPathCapabilities.FS_XATTRS,
        CommonPathCapabilities.FS_PATHHANDLES,
        CommonPathCapabilities.FS_MULTIPART_UPLOADER, CommonPathCapabilities.ETAGS_AVAILABLE,
        CommonPathCapabilities.ABORTABLE_STREAM}) {
      assertFalse(no, fs.hasPathCapability(base, no));
    }
  }

  @Test
  public void statisticsAreCounted() throws IOException {
    // Statistics are shared by every instance of the scheme: look at differences.
    StorageStatistics st = fs.getStorageStatistics();
    long w0 = st.getLong("bytesWritten");
    long r0 = st.getLong("bytesRead");
    long ro0 = st.getLong("readOps");
    long wo0 = st.getLong("writeOps");
    Path f = new Path(base, "stats");
    write(fs, f, "0123456789");
    assertEquals("0123456789", read(fs, f));
    fs.getFileStatus(f);
    fs.listStatus(base);
    assertEquals(10, st.getLong("bytesWritten") - w0);
    assertEquals(10, st.getLong("bytesRead") - r0);
    assertTrue(st.getLong("readOps") - ro0 >= 3);
    assertTrue(st.getLong("writeOps") - wo0 >= 1);
  }

  /**
   * A stream goes random (small buffer, nothing fetched ahead) when opened with a random-access
   * read policy, on a backward seek out of its buffer, or on a positioned read; it starts
   * sequential otherwise, and reads the same bytes either way.
   */
  @Test
  public void randomAccessIsDetected() throws Exception {
    Path f = new Path(base, "cols");
    byte[] d = data(3 << 20);
    try (FSDataOutputStream out = fs.create(f)) {
      out.write(d);
    }
    try (FSDataInputStream in = fs.open(f)) {
      assertFalse(stream(in).isRandom());
      in.seek(2 << 20);
      assertEquals(d[2 << 20] & 0xff, in.read());
      assertFalse("a forward seek is sequential", stream(in).isRandom());
      in.seek(100);
      assertTrue("a backward seek out of the buffer goes random", stream(in).isRandom());
      assertEquals(d[100] & 0xff, in.read());
    }
    try (FSDataInputStream in = fs.open(f)) {
      byte[] buf = new byte[10];
      in.readFully(5000, buf);
      assertTrue("a positioned read goes random", stream(in).isRandom());
    }
    for (String policy : new String[] {"parquet, columnar, vector, random, adaptive", "random",
        "unknown, columnar"}) {
      try (FSDataInputStream in = fs.openFile(f)
          .opt("fs.option.openfile.read.policy", policy).build().get()) {
        assertTrue(policy, stream(in).isRandom());
        byte[] buf = new byte[1000];
        in.readFully(buf);
        assertArrayEquals(java.util.Arrays.copyOf(d, 1000), buf);
      }
    }
    try (FSDataInputStream in = fs.openFile(f)
        .opt("fs.option.openfile.read.policy", "sequential").build().get()) {
      assertFalse(stream(in).isRandom());
    }
  }

  private static StrataInputStream stream(FSDataInputStream in) {
    return (StrataInputStream) in.getWrappedStream();
  }
}
