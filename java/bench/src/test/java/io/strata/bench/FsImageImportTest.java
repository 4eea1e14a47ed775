package io.strata.bench;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevCluster;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.server.namenode.FSImageUtil;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The import of a real HDFS namespace: a MiniDFSCluster is filled with thousands of files of
 * varied attributes ({@link HdfsImage#fill}: nested directories, an empty file and an empty
 * directory, names in several scripts, a directory with quotas, a symbolic link), its namespace
 * saved, and the image imported with {@code strata admin import} into a dev server; every entry's
 * attributes read through the Hadoop API from Strata must be those HDFS itself reports (its
 * times to the millisecond; from the Delimited text, to the minute), but a space quota: HDFS
 * charges bytes times replication, Strata once, so it comes in divided by the cluster's
 * dfs.replication as --replication gives it (3 by default). The same image truncated,
 * and with a byte flipped in each section, is refused, and the namespace is left as it was.
 */
public class FsImageImportTest {
  @ClassRule public static final TemporaryFolder TMP = new TemporaryFolder();

  private static final int FILES = 2000;

  private static HdfsImage hdfs;
  /** The bucket of the imported namespaces' new files. */
  private static File bucket;
  private static DevCluster strata;
  private static File image;
  /** What HDFS reports of each path, read once the image was saved. */
  private static Map<String, FileStatus> hdfsTree;
  private static Map<String, ContentSummary> hdfsSums;

  @BeforeClass
  public static void setUp() throws Exception {
    hdfs = new HdfsImage(TMP.newFolder("hdfs"));
    hdfs.fill(FILES, 7);
    File out = TMP.newFolder("image");
    hdfs.save(out);
    image = new File(out, "fsimage");
    hdfsTree = new TreeMap<>();
    hdfsSums = new TreeMap<>();
    walk(hdfs.fs(), new Path("/"), hdfsTree, hdfsSums);
    strata = DevCluster.start();
    bucket = TMP.newFolder("bucket");
  }

  @AfterClass
  public static void tearDown() throws IOException {
    if (hdfs != null) {
      hdfs.close();
    }
    if (strata != null) {
      strata.close();
    }
  }

  @Test
  public void theBinaryImageComesInAsHdfsHasIt() throws Exception {
    Run r = importImage(image, "fromimage");
    assertEquals(r.output, 0, r.status);
    assertTrue(r.output, r.output.contains("left out: 1 symbolic links"));
    assertTrue(r.output, r.output.contains("1 space quotas divided by 3"));
    assertSameTree("fromimage", false, 3);
  }

  @Test
  public void theDelimitedTextComesInToTheMinute() throws Exception {
    // The MiniDFSCluster's dfs.replication: the space quota comes in as HDFS has it.
    Run r = importImage(new File(image.getParentFile(), "fsimage.txt"), "fromtext",
        "--replication", "1");
    assertEquals(r.output, 0, r.status);
    assertTrue(r.output, r.output.contains("1 space quotas divided by 1"));
    assertSameTree("fromtext", true, 1);
  }

  @Test
  public void aTruncatedOrFlippedImageIsRefusedAndLeavesNothing() throws Exception {
    byte[] whole = Files.readAllBytes(image.toPath());
    File cut = TMP.newFile("cut");
    Files.write(cut.toPath(), java.util.Arrays.copyOf(whole, whole.length / 2));
    Run r = importImage(cut, "truncated");
    assertNotEquals(r.output, 0, r.status);
    assertTrue(r.output, r.output.contains("section") && r.output.contains("offset"));
    assertNoNamespace("truncated");
    // A byte flipped in each section that holds any: the MD5 file HDFS wrote beside the image
    // no longer matches (the digest cannot say where; the reader, where the damage breaks the
    // format, names the section).
    File md5 = new File(image.getPath() + ".md5");
    for (long[] s : sections(image)) {
      File flipped = new File(TMP.getRoot(), "flipped-" + s[0]);
      byte[] b = whole.clone();
      b[(int) (s[0] + s[1] / 2)] ^= 0x41;
      Files.write(flipped.toPath(), b);
      Files.copy(md5.toPath(), new File(flipped.getPath() + ".md5").toPath());
      Run f = importImage(flipped, "flipped");
      assertNotEquals(f.output, 0, f.status);
      assertTrue(f.output, f.output.contains("does not match its MD5 file"));
      assertNoNamespace("flipped");
    }
  }

  /** The sections of an image, as offset and length, as HDFS's own loader reads its index. */
  private static List<long[]> sections(File img) throws IOException {
    List<long[]> out = new ArrayList<>();
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(img, "r")) {
      for (var s : FSImageUtil.loadSummary(f).getSectionsList()) {
        if (s.getLength() > 0) {
          out.add(new long[] {s.getOffset(), s.getLength()});
        }
      }
    }
    return out;
  }

  private static void assertNoNamespace(String ns) throws IOException {
    String list = strata.admin("ns", "list");
    assertFalse(list, list.contains("\n" + ns + " "));
  }

  /**
   * Compares what Strata's namespace ns holds with what HDFS reported, its space quotas divided
   * by replication.
   */
  private static void assertSameTree(String ns, boolean minutes, long replication)
      throws IOException {
    Configuration conf = new Configuration();
    conf.set("fs.strata.meta.address", strata.address());
    conf.set("fs.strata.token", strata.token());
    try (FileSystem fs = FileSystem.newInstance(URI.create("strata://" + ns + "/"), conf)) {
      Map<String, FileStatus> got = new TreeMap<>();
      Map<String, ContentSummary> sums = new TreeMap<>();
      walk(fs, new Path("/"), got, sums);
      Map<String, FileStatus> want = new TreeMap<>(hdfsTree);
      assertTrue(want.remove(HdfsImage.LINK) != null);
      assertEquals(want.keySet(), got.keySet());
      for (Map.Entry<String, FileStatus> e : want.entrySet()) {
        FileStatus w = e.getValue();
        FileStatus g = got.get(e.getKey());
        String p = e.getKey();
        assertEquals(p, w.isDirectory(), g.isDirectory());
        assertEquals(p, w.getPermission(), g.getPermission());
        assertEquals(p, w.getOwner(), g.getOwner());
        assertEquals(p, w.getGroup(), g.getGroup());
        long unit = minutes ? 60_000 : 1;
        assertEquals(p, w.getModificationTime() / unit, g.getModificationTime() / unit);
        if (w.isFile()) {
          assertEquals(p, w.getLen(), g.getLen());
          assertEquals(p, w.getReplication(), g.getReplication());
          assertEquals(p, w.getBlockSize(), g.getBlockSize());
          assertEquals(p, w.getAccessTime() / unit, g.getAccessTime() / unit);
        } else {
          ContentSummary ws = hdfsSums.get(p);
          ContentSummary gs = sums.get(p);
          // HDFS counts the link as a file; Strata left it out.
          long links = p.equals("/") || HdfsImage.LINK.startsWith(p + "/") ? 1 : 0;
          assertEquals(p, ws.getFileCount() - links, gs.getFileCount());
          assertEquals(p, ws.getDirectoryCount(), gs.getDirectoryCount());
          assertEquals(p, ws.getLength(), gs.getLength());
          assertEquals(p, ws.getQuota(), gs.getQuota());
          long space = ws.getSpaceQuota() < 0
              ? ws.getSpaceQuota() : ws.getSpaceQuota() / replication;
          assertEquals(p, space, gs.getSpaceQuota());
        }
      }
      ContentSummary q = sums.get(HdfsImage.QUOTA_DIR);
      assertEquals(HdfsImage.NS_QUOTA, q.getQuota());
      assertEquals(HdfsImage.DS_QUOTA / replication, q.getSpaceQuota());
    }
  }

  /** Every path under dir, with its status, and each directory's content summary. */
  private static void walk(FileSystem fs, Path dir, Map<String, FileStatus> out,
      Map<String, ContentSummary> sums) throws IOException {
    String key = Path.getPathWithoutSchemeAndAuthority(dir).toString();
    out.put(key, fs.getFileStatus(dir));
    sums.put(key, fs.getContentSummary(dir));
    for (FileStatus st : fs.listStatus(dir)) {
      String p = Path.getPathWithoutSchemeAndAuthority(st.getPath()).toString();
      if (st.isDirectory()) {
        walk(fs, st.getPath(), out, sums);
      } else {
        out.put(p, st);
      }
    }
  }

  /** What a run of strata admin import did. */
  private record Run(int status, String output) {}

  private static Run importImage(File img, String ns, String... flags) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(System.getProperty(DevCluster.BINARY_PROPERTY),
        "admin", "import", img.getPath(), ns, "--work-dir", new File(TMP.getRoot(), "work-" + ns
            + "-" + System.nanoTime()).getPath(), "--store", "file://" + bucket.getAbsolutePath(),
        "--meta", strata.address(), "--token-file", strata.tokenFile().toString()));
    cmd.addAll(List.of(flags));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", cmd) + ": did not finish in 120 s:\n" + out);
    }
    return new Run(p.exitValue(), out);
  }
}
