package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LeaseRecoverable;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/**
 * HDFS's TestHFlush, on strata://: a writer hflushes (or hsyncs) portions of a file across blocks,
 * and a second FileSystem instance (another client) sees each flushed length and reads the bytes
 * before the writer closes; a writer whose client goes away after hsync loses nothing synced.
 */
public class TestStrataHFlush extends StrataTestBase {
  private static final int MIB = 1 << 20;

  private static Configuration smallBlocks() {
    Configuration c = conf();
    c.set(StrataConfigKeys.BLOCK_SIZE, "1m");
    return c;
  }

  private static byte[] data(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] readAll(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return in.readAllBytes();
    }
  }

  @Test
  public void aSecondClientReadsHflushedBytesBeforeClose() throws IOException {
    checkFlushes(false);
  }

  @Test
  public void aSecondClientReadsHsyncedBytesBeforeClose() throws IOException {
    checkFlushes(true);
  }

  /** Portions of uneven sizes, over 1 MiB blocks, each flushed and read by another client. */
  private void checkFlushes(boolean hsync) throws IOException {
    Path f = new Path(base, "f");
    int[] portions = {1, 4095, 2, 700_000, 600_000, MIB, 3, 2 * MIB + 17, 100};
    ByteArrayOutputStream want = new ByteArrayOutputStream();
    try (FileSystem writer = newFs("strata://default/", smallBlocks());
        FileSystem reader = newFs("strata://default/", conf())) {
      FSDataOutputStream out = writer.create(f);
      for (int i = 0; i < portions.length; i++) {
        byte[] b = data(portions[i], i);
        out.write(b);
        want.write(b);
        if (hsync) {
          out.hsync();
        } else {
          out.hflush();
        }
        assertEquals("portion " + i, want.size(), out.getPos());
        assertEquals("portion " + i, want.size(), reader.getFileStatus(f).getLen());
        assertFalse(((LeaseRecoverable) reader).isFileClosed(f));
        assertArrayEquals("portion " + i, want.toByteArray(), readAll(reader, f));
      }
      out.close();
      assertTrue(((LeaseRecoverable) reader).isFileClosed(f));
      assertArrayEquals(want.toByteArray(), readAll(reader, f));
    }
  }

  /**
   * Positioned reads and seeks of a reader opened after a flush, across the last block and the
   * flushed tail, while the writer goes on.
   */
  @Test
  public void positionedReadsAcrossBlocksAndTheTail() throws IOException {
    Path f = new Path(base, "p");
    byte[] d = data(3 * MIB, 42);
    try (FileSystem writer = newFs("strata://default/", smallBlocks());
        FSDataOutputStream out = writer.create(f)) {
      out.write(d, 0, MIB + 5000);
      out.hflush(); // blocks hold it all
      out.write(d, MIB + 5000, 300_000);
      out.hflush(); // the tail holds the 300,000
      int visible = MIB + 305_000;
      try (FSDataInputStream in = fs.open(f)) {
        out.write(d, visible, MIB);
        out.hflush();
        byte[] got = new byte[20_000];
        in.readFully(MIB + 5000 - 10_000, got); // the last block, then the tail
        assertArrayEquals(Arrays.copyOfRange(d, MIB + 5000 - 10_000, MIB + 15_000), got);
        in.seek(visible - 100);
        byte[] end = new byte[200];
        assertEquals(100, in.read(end, 0, 200));
        assertArrayEquals(Arrays.copyOfRange(d, visible - 100, visible), Arrays.copyOf(end, 100));
        assertEquals(-1, in.read());
      }
    }
  }

  /**
   * The writer's client goes away (its FileSystem closed, the stream never closed) after an
   * hsync: lease recovery by another client closes the file with every synced byte.
   */
  @Test
  public void syncedBytesSurviveTheWritersClient() throws IOException, InterruptedException {
    Path f = new Path(base, "lost");
    byte[] d = data(2 * MIB + 12_345, 5);
    FileSystem writer = newFs("strata://default/", smallBlocks());
    FSDataOutputStream out = writer.create(f);
    out.write(d, 0, MIB + 100);
    out.hsync();
    out.write(d, MIB + 100, d.length - MIB - 100);
    out.hsync();
    writer.close(); // the lease is left to recovery
    LeaseRecoverable lr = (LeaseRecoverable) fs;
    assertFalse(lr.isFileClosed(f));
    for (int i = 0; i < 100 && !lr.recoverLease(f); i++) {
      Thread.sleep(10); // polling the recovery
    }
    assertTrue(lr.isFileClosed(f));
    assertArrayEquals(d, readAll(fs, f));
  }
}
