package io.strata.compat;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevClusterRule;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * getFileChecksum of the same bytes in Strata and in a real HDFS (MiniDFSCluster, 1 MiB blocks,
 * 512 bytes per CRC): equal in HDFS's COMPOSITE_CRC form, whatever the block size on either side,
 * for whole files and prefixes; never equal to HDFS's default MD5MD5CRC32C form.
 */
public class TestChecksumsAgreeWithHdfs {
  @ClassRule public static final DevClusterRule STRATA = new DevClusterRule();
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static Sides sides;
  private static FileSystem hdfs;
  private static FileSystem strata;

  @BeforeClass
  public static void start() throws Exception {
    sides = Sides.start(TMP.newFolder("hdfs"), 1 << 20, STRATA.address(), STRATA.token());
    hdfs = sides.hdfs(sides.conf());
    strata = sides.strata(sides.conf());
  }

  @AfterClass
  public static void stop() throws Exception {
    if (strata != null) {
      strata.close();
    }
    if (hdfs != null) {
      hdfs.close();
    }
    if (sides != null) {
      sides.close();
    }
  }

  private static void write(FileSystem fs, Path p, byte[] data, long blockSize) throws Exception {
    try (FSDataOutputStream out = fs.create(p, true, 4096, (short) 1, blockSize)) {
      out.write(data);
    }
  }

  @Test
  public void wholeFilesAndPrefixesAgree() throws Exception {
    byte[] data = new byte[3 * (1 << 20) + 5];
    new Random(7).nextBytes(data);
    int[] sizes = {0, 1, 511, 512, 513, 4096, 4097, 65536, 1 << 20, (1 << 20) + 1, data.length};
    for (int size : sizes) {
      byte[] bytes = java.util.Arrays.copyOf(data, size);
      Path p = new Path("/sums/f" + size);
      write(hdfs, p, bytes, 1 << 20);
      write(strata, p, bytes, 64 << 20);
      Path small = new Path("/sums/small-blocks-" + size);
      write(strata, small, bytes, 512 << 10);
      FileChecksum h = hdfs.getFileChecksum(p);
      assertEquals(size + " bytes: " + h, size == 0 ? "MD5-of-0MD5-of-0CRC32" : "COMPOSITE-CRC32C",
          h.getAlgorithmName());
      assertEquals(size + " bytes", h, strata.getFileChecksum(p));
      assertEquals(size + " bytes over 512 KiB blocks", h, strata.getFileChecksum(small));
      assertEquals(h.toString(), strata.getFileChecksum(p).toString());
    }
    Path p = new Path("/sums/f" + data.length);
    for (long prefix : new long[] {0, 1, 1000, 1 << 20, (1 << 20) + 17, 2 << 20, data.length - 1}) {
      assertEquals("prefix " + prefix, hdfs.getFileChecksum(p, prefix),
          strata.getFileChecksum(p, prefix));
    }
    assertEquals(hdfs.getFileChecksum(p), strata.getFileChecksum(p, Long.MAX_VALUE));
  }

  /**
   * HDFS's default form (an MD5 of per-block MD5s of a CRC per 512 bytes) is never what Strata
   * answers: the algorithm names differ, so the checksums are not equal, and a DistCp between the
   * two in that form reports a mismatch instead of taking different files for equal.
   */
  @Test
  public void hdfsDefaultFormIsNeverEqual() throws Exception {
    Configuration md5 = sides.conf();
    md5.set(Sides.COMBINE_MODE, "MD5MD5CRC");
    md5.setBoolean("fs.hdfs.impl.disable.cache", true);
    byte[] bytes = new byte[100_000];
    new Random(8).nextBytes(bytes);
    Path p = new Path("/sums/md5");
    write(hdfs, p, bytes, 1 << 20);
    write(strata, p, bytes, 1 << 20);
    try (FileSystem hdfsMd5 = sides.hdfs(md5); FileSystem strataMd5 = sides.strata(md5)) {
      FileChecksum h = hdfsMd5.getFileChecksum(p);
      FileChecksum s = strataMd5.getFileChecksum(p);
      assertTrue(h.getAlgorithmName(), h.getAlgorithmName().startsWith("MD5-of-"));
      assertEquals("COMPOSITE-CRC32C", s.getAlgorithmName());
      assertNotEquals(h, s);
      assertEquals(hdfs.getFileChecksum(p), s);
    }
  }
}
