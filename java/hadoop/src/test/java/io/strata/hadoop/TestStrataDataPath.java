package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.strata.proto.v1.WorkerStats;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.ToLongFunction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.Test;

/** Files over the inline limit through StrataFileSystem: the workers' data path. */
public class TestStrataDataPath extends StrataTestBase {
  private static final int MIB = 1 << 20;

  private static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem fs, Path p, byte[] d, long blockSize) throws IOException {
    try (FSDataOutputStream out = fs.create(p, FsPermission.getFileDefault(), true, 4096,
        (short) 1, blockSize, null)) {
      for (int off = 0, step = 777; off < d.length; off += step, step = step * 2 + 1) {
        out.write(d, off, Math.min(step, d.length - off));
      }
      assertEquals(d.length, out.getPos());
    }
  }

  private static byte[] readAll(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return in.readAllBytes();
    }
  }

  private long sum(FileSystem f, ToLongFunction<WorkerStats> field) throws IOException {
    return ((StrataFileSystem) f).getClient().workerStats().stream().mapToLong(field).sum();
  }

  @Test
  public void sizesAroundTheInlineLimit() throws IOException {
    for (int n : new int[] {0, 1, 4096, 4097, 3 * MIB + 5}) {
      Path f = new Path(base, "f" + n);
      byte[] d = data(n, n);
      write(fs, f, d, MIB);
      assertArrayEquals("size " + n, d, readAll(fs, f));
      assertEquals(n, fs.getFileStatus(f).getLen());
    }
  }

  @Test
  public void blockSizeFromTheConfiguration() throws IOException {
    Configuration c = conf();
    c.set(StrataConfigKeys.BLOCK_SIZE, "1m");
    try (FileSystem small = newFs("strata://default/", c)) {
      Path f = new Path(base, "conf");
      byte[] d = data(2 * MIB + 10, 1);
      try (FSDataOutputStream out = small.create(f)) {
        out.write(d);
      }
      FileStatus st = small.getFileStatus(f);
      assertEquals(MIB, st.getBlockSize());
      assertEquals(3, small.getFileBlockLocations(st, 0, st.getLen()).length);
      assertArrayEquals(d, readAll(small, f));
    }
  }

  /**
   * With {@code fs.strata.block.size} unset the client sends no block size: a file gets the
   * service's default (64 MiB for a dev server), which getDefaultBlockSize reports too.
   */
  @Test
  public void blockSizeFromTheServiceWhenUnset() throws IOException {
    Path f = new Path(base, "default-block");
    assertEquals(64 * MIB, fs.getDefaultBlockSize(f));
    assertEquals(64 * MIB, fs.getServerDefaults(f).getBlockSize());
    try (FSDataOutputStream out = fs.create(f)) {
      out.write(data(10_000, 4));
    }
    assertEquals(64 * MIB, fs.getFileStatus(f).getBlockSize());
  }

  @Test
  public void sequentialReadsSeeksAndPositionedReads() throws IOException {
    Configuration c = conf();
    c.set(StrataConfigKeys.READ_BUFFER, "64k");
    try (FileSystem small = newFs("strata://default/", c)) {
      Path f = new Path(base, "seq");
      byte[] d = data(2 * MIB + 333, 2);
      write(small, f, d, MIB);
      Random rnd = new Random(3);
      try (FSDataInputStream in = small.open(f)) {
        // Small sequential reads across buffer refills and block boundaries.
        byte[] got = new byte[d.length];
        int off = 0;
        while (off < d.length) {
          int n = in.read(got, off, Math.min(1 + rnd.nextInt(40_000), d.length - off));
          assertTrue(n > 0);
          off += n;
        }
        assertArrayEquals(d, got);
        assertEquals(-1, in.read());
        for (int i = 0; i < 100; i++) {
          long pos = rnd.nextInt(d.length);
          if (rnd.nextBoolean()) {
            in.seek(pos);
            assertEquals(pos, in.getPos());
            assertEquals(d[(int) pos] & 0xff, in.read());
            byte[] b = new byte[rnd.nextInt(100_000)];
            int n = in.read(b);
            int want = (int) Math.min(b.length, d.length - pos - 1);
            assertEquals(want == 0 && b.length > 0 ? -1 : want, n);
            if (want > 0) {
              assertArrayEquals(Arrays.copyOfRange(d, (int) pos + 1, (int) pos + 1 + want),
                  Arrays.copyOf(b, want));
            }
          } else {
            long before = in.getPos();
            int len = (int) Math.min(rnd.nextInt(3 * MIB), d.length - pos);
            byte[] b = new byte[len];
            in.readFully(pos, b);
            assertArrayEquals(Arrays.copyOfRange(d, (int) pos, (int) pos + len), b);
            assertEquals("positioned reads leave the position", before, in.getPos());
          }
        }
        in.unbuffer();
        in.seek(MIB - 2);
        byte[] b = new byte[4];
        in.readFully(b);
        assertArrayEquals(Arrays.copyOfRange(d, MIB - 2, MIB + 2), b);
        try {
          in.readFully(d.length - 2, new byte[4]);
          throw new AssertionError("readFully past the end");
        } catch (EOFException expected) {
          // As HDFS.
        }
      }
    }
  }

  @Test
  public void vectoredReadsAcrossBlocks() throws Exception {
    Path f = new Path(base, "vectored");
    byte[] d = data(3 * MIB, 4);
    write(fs, f, d, MIB);
    List<FileRange> ranges = new ArrayList<>();
    long[][] spans = {{0, 100}, {200, MIB - 300}, {MIB - 50, MIB + 52}, {2L * MIB + 5, 100},
        {3L * MIB - 100, 100}};
    for (long[] sp : spans) {
      ranges.add(FileRange.createFileRange(sp[0], (int) sp[1]));
    }
    try (FSDataInputStream in = fs.open(f)) {
      in.readVectored(ranges, ByteBuffer::allocateDirect);
      for (FileRange r : ranges) {
        ByteBuffer b = r.getData().get();
        byte[] got = new byte[r.getLength()];
        b.get(got);
        assertArrayEquals(Arrays.copyOfRange(d, (int) r.getOffset(),
            (int) r.getOffset() + r.getLength()), got);
      }
    }
  }

  @Test
  public void blockLocationsNameTheHomeWorker() throws IOException {
    Path f = new Path(base, "located");
    byte[] d = data(2 * MIB + 1, 5);
    write(fs, f, d, MIB);
    FileStatus st = fs.getFileStatus(f);
    BlockLocation[] all = fs.getFileBlockLocations(st, 0, st.getLen());
    assertEquals(3, all.length);
    List<WorkerStats> workers = ((StrataFileSystem) fs).getClient().workerStats();
    assertEquals("the dev server has one worker", 1, workers.size());
    for (int i = 0; i < 3; i++) {
      assertEquals((long) i * MIB, all[i].getOffset());
      assertEquals(i < 2 ? MIB : 1, all[i].getLength());
      assertEquals(1, all[i].getHosts().length);
      assertTrue(all[i].getNames()[0], all[i].getNames()[0].matches(".+:\\d+"));
    }
    assertEquals("the one holding the start", 1,
        fs.getFileBlockLocations(st, MIB + 5, 0).length);
    assertEquals(2, fs.getFileBlockLocations(st, MIB - 1, 2).length);
    assertEquals(0, fs.getFileBlockLocations(st, st.getLen(), 10).length);
    assertEquals(1, fs.getFileBlockLocations(f, 2L * MIB, 100).length);
    RemoteIterator<LocatedFileStatus> it = fs.listLocatedStatus(base);
    LocatedFileStatus located = it.next();
    assertEquals(3, located.getBlockLocations().length);
    assertEquals(all[2].getHosts()[0], located.getBlockLocations()[2].getHosts()[0]);
  }

  @Test
  public void shortCircuitOnAndOff() throws IOException {
    Path f = new Path(base, "sc");
    byte[] d = data(2 * MIB, 6);
    write(fs, f, d, MIB);
    long sc0 = sum(fs, WorkerStats::getShortCircuitBytes);
    long rpc0 = sum(fs, WorkerStats::getRpcBytesRead);
    assertArrayEquals(d, readAll(fs, f));
    assertTrue(sum(fs, WorkerStats::getShortCircuitBytes) - sc0 >= d.length);
    assertEquals(rpc0, sum(fs, WorkerStats::getRpcBytesRead));

    Configuration c = conf();
    c.setBoolean(StrataConfigKeys.SHORT_CIRCUIT, false);
    try (FileSystem rpc = newFs("strata://default/", c)) {
      long sc1 = sum(rpc, WorkerStats::getShortCircuitBytes);
      assertArrayEquals(d, readAll(rpc, f));
      assertEquals(sc1, sum(rpc, WorkerStats::getShortCircuitBytes));
      assertTrue(sum(rpc, WorkerStats::getRpcBytesRead) - rpc0 >= d.length);
    }
  }

  @Test
  public void statisticsCountBlockBytes() throws IOException {
    long w0 = fs.getStorageStatistics().getLong("bytesWritten");
    long r0 = fs.getStorageStatistics().getLong("bytesRead");
    Path f = new Path(base, "stats");
    byte[] d = data(MIB + 7, 7);
    write(fs, f, d, MIB);
    readAll(fs, f);
    assertEquals(d.length, fs.getStorageStatistics().getLong("bytesWritten") - w0);
    assertEquals(d.length, fs.getStorageStatistics().getLong("bytesRead") - r0);
  }
}
