package io.strata.compat;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.strata.core.testing.DevClusterRule;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * hadoop-distcp on the local job runner moves a tree of varied files from a real HDFS
 * (MiniDFSCluster) into Strata and back with {@code -update -pugpt}, through the shaded jar: each
 * copy is the source (names, bytes, modes, owners, groups, times), DistCp's own check of each copy
 * by checksum passes, and a second {@code -update} copies nothing (it finds every file equal by
 * length and checksum).
 */
public class TestDistCpBothWays {
  @ClassRule public static final DevClusterRule STRATA = new DevClusterRule();
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static Sides sides;
  private static FileSystem hdfs;
  private static FileSystem strata;
  private static int files;

  @BeforeClass
  public static void start() throws Exception {
    sides = Sides.start(TMP.newFolder("hdfs"), 1 << 20, STRATA.address(), STRATA.token());
    hdfs = sides.hdfs(conf());
    strata = sides.strata(conf());
    Trees.make(hdfs, new Path("/src"));
    files = (int) Trees.walk(hdfs, new Path("/src")).values().stream()
        .filter(st -> st.isFile()).count();
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
    // DistCp's clients, cached by scheme, authority and user: not for the next class's servers.
    FileSystem.closeAll();
  }

  /**
   * Both sides' configuration, with HDFS's client asking the NameNode again after 20 ms rather
   * than 400 whether a file it closed is complete: each file's close waits for that answer, and
   * at HDFS's default the copies' thousand closes would take minutes of sleep.
   */
  private static Configuration conf() {
    Configuration c = sides.conf();
    c.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 20);
    return c;
  }

  private static String h(String p) {
    return sides.hdfsUri().resolve(p).toString();
  }

  @Test
  public void intoStrataAndBack() throws Exception {
    Configuration conf = conf();
    Copies.Result in = Copies.distcp(conf, "-update", "-pugpt", h("/src"), "strata://default/dst");
    assertEquals("files copied into Strata: " + in, files, in.copied());
    Trees.assertSame(hdfs, new Path("/src"), strata, new Path("/dst"));
    Copies.Result again = Copies.distcp(conf, "-update", "-pugpt", h("/src"),
        "strata://default/dst");
    assertEquals("a second -update into Strata copied: " + again, 0, again.copied());
    assertEquals(0, again.bytes());
    assertEquals(files, again.skipped());

    Copies.Result back = Copies.distcp(conf, "-update", "-pugpt", "strata://default/dst",
        h("/back"));
    assertEquals("files copied back into HDFS: " + back, files, back.copied());
    Trees.assertSame(strata, new Path("/dst"), hdfs, new Path("/back"));
    Trees.assertSame(hdfs, new Path("/src"), hdfs, new Path("/back"));
    Copies.Result backAgain = Copies.distcp(conf, "-update", "-pugpt", "strata://default/dst",
        h("/back"));
    assertEquals("a second -update back copied: " + backAgain, 0, backAgain.copied());
  }

  /**
   * A file changed in Strata with its length kept is found by its checksum: {@code -update}
   * copies it again, and only it.
   */
  @Test
  public void aChangeOfTheSameLengthIsCopied() throws Exception {
    Configuration conf = conf();
    Copies.distcp(conf, "-update", "-pugpt", h("/src"), "strata://default/changed");
    Path p = new Path("/changed/a/past-inline-4097");
    byte[] other = new byte[4097];
    java.util.Arrays.fill(other, (byte) 'x');
    long mtime = strata.getFileStatus(p).getModificationTime();
    try (var out = strata.create(p, true)) {
      out.write(other);
    }
    strata.setTimes(p, mtime, -1);
    Copies.Result r = Copies.distcp(conf, "-update", "-pugpt", h("/src"),
        "strata://default/changed");
    assertEquals("copied after one same-length change: " + r, 1, r.copied());
    Trees.assertSame(hdfs, new Path("/src"), strata, new Path("/changed"));
  }

  /**
   * In HDFS's default checksum form DistCp into Strata fails its check of each copy, saying the
   * checksums differ, rather than take the copy for good unchecked; with -skipcrccheck it copies.
   */
  @Test
  public void hdfsDefaultFormFailsTheCheckClearly() throws Exception {
    Configuration md5 = conf();
    md5.set(Sides.COMBINE_MODE, "MD5MD5CRC");
    // Not the HDFS clients of the other tests, which FileSystem.get caches by URI and user.
    md5.setBoolean("fs.hdfs.impl.disable.cache", true);
    try {
      Copies.distcp(md5, "-update", "-pugpt", h("/src/a/b"), "strata://default/md5");
      fail("DistCp in HDFS's default checksum form passed its checks");
    } catch (Exception e) {
      String all = String.valueOf(e.getMessage());
      assertTrue(all, all.contains("failed"));
    }
    Copies.Result r = Copies.distcp(md5, "-update", "-skipcrccheck", "-pugpt", h("/src/a/b"),
        "strata://default/md5-skipcrc");
    assertEquals(3, r.copied());
  }
}
