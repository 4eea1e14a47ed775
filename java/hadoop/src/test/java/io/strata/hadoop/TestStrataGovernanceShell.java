package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevCluster;
import io.strata.core.testing.DevClusterRule;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.After;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * Quotas, extended attributes and ACLs through Hadoop's FsShell (hadoop fs) and through {@code
 * strata fs} against one real server: every command's output, errors and exit code byte for
 * byte the same, and the Hadoop API's calls (setQuota, the storage policies) seen by both.
 */
public class TestStrataGovernanceShell {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();

  private Configuration conf() {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, SERVER.address());
    conf.set(StrataConfigKeys.TOKEN, DevCluster.tokenOf(SERVER.address()));
    conf.set(FileSystem.FS_DEFAULT_NAME_KEY, "strata://default/");
    return conf;
  }

  @After
  public void closeCachedFileSystems() throws Exception {
    FileSystem.closeAll();
  }

  private ShellRun hadoop(String... args) throws Exception {
    return ShellRun.of(conf(), args);
  }

  private ShellRun strata(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(System.getProperty(DevCluster.BINARY_PROPERTY),
        "fs", "--meta", SERVER.address(), "--token-file",
        SERVER.cluster().tokenFile().toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    int rc = p.waitFor();
    // Hadoop's FsShell exits -1 for a usage error, which the process reports as 255.
    return new ShellRun(rc == 255 ? -1 : rc, new String(out, StandardCharsets.UTF_8),
        new String(err, StandardCharsets.UTF_8));
  }

  /** Runs a read-only command through both shells: the same bytes, the same exit code. */
  private ShellRun same(String... args) throws Exception {
    ShellRun h = hadoop(args);
    ShellRun s = strata(args);
    assertEquals(String.join(" ", args), usageAside(h), usageAside(s));
    return h;
  }

  /**
   * Runs a changing command through Hadoop's shell on {@code /gov/h} and through strata fs on
   * {@code /gov/s}, the same paths below each: the same answer, the path aside.
   */
  private ShellRun both(String... args) throws Exception {
    ShellRun h = hadoop(args);
    String[] onS = new String[args.length];
    for (int i = 0; i < args.length; i++) {
      onS[i] = args[i].replace("/gov/h", "/gov/s");
    }
    ShellRun s = strata(onS);
    ShellRun sAsH = new ShellRun(s.rc(), s.out().replace("/gov/s", "/gov/h"),
        s.err().replace("/gov/s", "/gov/h"));
    assertEquals(String.join(" ", args), usageAside(h), usageAside(sAsH));
    return h;
  }

  /**
   * A usage error's first line, without the usage that follows it: Hadoop's names "hadoop fs"
   * and its generic options, strata fs's its own.
   */
  private static ShellRun usageAside(ShellRun r) {
    return r.rc() != -1 ? r
        : new ShellRun(r.rc(), r.out(), r.err().lines().findFirst().orElse(""));
  }

  private void tree(String root) throws Exception {
    FileSystem fs = FileSystem.get(conf());
    fs.mkdirs(new Path(root + "/d/sub"));
    try (FSDataOutputStream o = fs.create(new Path(root + "/f"))) {
      o.write("0123456789".getBytes(StandardCharsets.UTF_8));
    }
    fs.create(new Path(root + "/d/g")).close();
  }

  @Test
  public void xattrsAndAclsByteForByte() throws Exception {
    tree("/gov/h");
    tree("/gov/s");
    both("-setfattr", "-n", "user.a", "-v", "hello", "/gov/h/f");
    both("-setfattr", "-n", "user.b", "-v", "0x0102ff", "/gov/h/f");
    both("-setfattr", "-n", "user.c", "/gov/h/f");
    both("-setfattr", "-n", "user.gone", "-v", "x", "/gov/h/d");
    both("-setfattr", "-x", "user.gone", "/gov/h/d");
    ShellRun bad = both("-setfattr", "-n", "nonamespace", "-v", "x", "/gov/h/f");
    assertNotEquals(0, bad.rc());
    both("-setfattr", "-x", "user.never", "/gov/h/f");
    both("-setfacl", "-m", "user:alice:rwx,group:staff:r-x", "/gov/h/d");
    both("-setfacl", "-m", "default:user:bob:r-x,default:other::---", "/gov/h/d");
    both("-setfacl", "--set", "user::rw-,group::r--,other::---,user:carol:rw-", "/gov/h/f");
    both("-setfacl", "-x", "group:staff", "/gov/h/d");
    ShellRun noMask = both("-setfacl", "-m", "user:alice:rwx,mask::", "/gov/h/d/g");
    assertNotEquals(0, noMask.rc());
    both("-setfacl", "-R", "-m", "user:dave:r--", "/gov/h/d/sub");
    both("-setfacl", "-k", "/gov/h/d/sub");

    for (String enc : new String[] {"text", "hex", "base64"}) {
      same("-getfattr", "-d", "-e", enc, "/gov/h/f");
    }
    same("-getfattr", "-n", "user.a", "/gov/h/f");
    same("-getfattr", "-R", "-d", "/gov/h");
    ShellRun missing = same("-getfattr", "-n", "user.missing", "/gov/h/f");
    assertEquals(1, missing.rc());
    same("-getfacl", "/gov/h/d");
    same("-getfacl", "/gov/h/f");
    same("-getfacl", "-R", "/gov/h");
    same("-getfacl", "/gov/h/nothing");
    String ls = same("-ls", "/gov/h").out();
    assertTrue(ls, ls.contains("drwxrwxr-x+"));
    same("-getfacl", "/gov/s/d");

    both("-setfacl", "-b", "/gov/h/f");
    same("-getfacl", "/gov/h/f");
    same("-ls", "/gov/h");
    FileSystem.get(conf()).delete(new Path("/gov"), true);
  }

  @Test
  public void quotasByteForByte() throws Exception {
    FileSystem fs = FileSystem.get(conf());
    tree("/quota/h");
    // The Hadoop client's admin interface: HDFS's DistributedFileSystem.setQuota.
    fs.setQuota(new Path("/quota/h"), 6, 1 << 20);
    same("-count", "-q", "/quota/h");
    same("-count", "-q", "-h", "-v", "/quota/h");
    same("-count", "-u", "/quota/h");
    same("-count", "-q", "/quota/h/d");
    same("-count", "-q", "/quota");
    // /quota/h, d, d/sub, d/g, f: one name left.
    hadoop("-touchz", "/quota/h/one");
    ShellRun over = same("-touchz", "/quota/h/two");
    assertEquals(1, over.rc());
    assertTrue(over.err(), over.err().contains("The NameSpace quota (directories and files) of "
        + "directory /quota/h is exceeded: quota=6 file count=7"));
    assertThrows(NSQuotaExceededException.class, () -> fs.mkdirs(new Path("/quota/h/x")));
    ShellRun mkdir = same("-mkdir", "/quota/h/x");
    assertEquals(1, mkdir.rc());

    fs.setQuota(new Path("/quota/h"), -1, 12);
    same("-count", "-q", "-v", "/quota/h");
    ShellRun full = same("-cp", "/quota/h/f", "/quota/h/f2");
    assertEquals(1, full.rc());
    byte[] big = new byte[100];
    DSQuotaExceededException ds = assertThrows(DSQuotaExceededException.class, () -> {
      try (FSDataOutputStream o = fs.create(new Path("/quota/h/big"))) {
        o.write(big);
      }
    });
    assertTrue(ds.getMessage(), ds.getMessage().startsWith("The DiskSpace quota of /quota/h "
        + "is exceeded"));
    fs.setQuota(new Path("/quota/h"), -1, -1);
    same("-count", "-q", "/quota/h");
    fs.delete(new Path("/quota"), true);
  }

  @Test
  public void storagePoliciesThroughTheHadoopApi() throws Exception {
    FileSystem fs = FileSystem.get(conf());
    fs.mkdirs(new Path("/sp/hot"));
    List<String> names = new ArrayList<>();
    fs.getAllStoragePolicies().forEach(p -> names.add(p.getName()));
    assertTrue(names.toString(), names.containsAll(List.of("HOT", "WARM", "COLD")));
    fs.setStoragePolicy(new Path("/sp/hot"), "HOT");
    fs.create(new Path("/sp/hot/f")).close();
    assertEquals("HOT", fs.getStoragePolicy(new Path("/sp/hot/f")).getName());
    fs.unsetStoragePolicy(new Path("/sp/hot"));
    assertNotEquals("HOT", fs.getStoragePolicy(new Path("/sp/hot")).getName());
    fs.delete(new Path("/sp"), true);
  }
}
