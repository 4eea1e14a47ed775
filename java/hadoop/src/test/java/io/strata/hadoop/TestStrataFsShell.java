package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.DevClusterRule;
import java.io.File;
import java.nio.file.Files;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.After;
import org.junit.ClassRule;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** Hadoop's FsShell (hadoop fs) run programmatically against strata://. */
public class TestStrataFsShell {
  @ClassRule public static final DevClusterRule SERVER = new DevClusterRule();
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private Configuration conf(String address) {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, address);
    if (io.strata.core.testing.DevCluster.started(address)) {
      conf.set(StrataConfigKeys.TOKEN, io.strata.core.testing.DevCluster.tokenOf(address));
    }
    conf.set(FileSystem.FS_DEFAULT_NAME_KEY, "strata://default/");
    return conf;
  }

  private ShellRun shell(Configuration conf, String... args) throws Exception {
    return ShellRun.of(conf, args);
  }

  private ShellRun ok(String... args) throws Exception {
    ShellRun r = shell(conf(SERVER.address()), args);
    assertEquals(String.join(" ", args) + ": " + r, 0, r.rc());
    return r;
  }

  @After
  public void closeCachedFileSystems() throws Exception {
    // FsShell uses the FileSystem cache, whose key ignores the service address.
    FileSystem.closeAll();
  }

  @Test
  public void everydayCommands() throws Exception {
    ok("-mkdir", "-p", "/shell/a/b", "strata://default/shell/c");
    ok("-touchz", "/shell/a/b/empty");
    File local = tmp.newFile("hello.txt");
    Files.writeString(local.toPath(), "hello strata\n");
    ok("-put", local.getPath(), "/shell/a/hello.txt");
    assertEquals("hello strata\n", ok("-cat", "/shell/a/hello.txt").out());

    String ls = ok("-ls", "-R", "/shell").out();
    assertTrue(ls, ls.contains("/shell/a/b/empty"));
    assertTrue(ls, ls.contains("/shell/a/hello.txt"));
    assertTrue(ls, ls.contains("drwxr-xr-x"));
    assertTrue(ls, ls.contains("-rw-r--r--"));

    // DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME: /shell, a, b, c; empty, hello.txt.
    String count = ok("-count", "/shell").out().trim();
    assertTrue(count, count.matches("4\\s+2\\s+13\\s+\\S*/shell"));
    String du = ok("-du", "-s", "/shell").out().trim();
    assertTrue(du, du.matches("13\\s+13\\s+\\S*/shell"));

    ok("-mv", "/shell/a/hello.txt", "/shell/c");
    assertEquals("hello strata\n", ok("-cat", "/shell/c/hello.txt").out());
    ok("-rm", "-r", "/shell/a");
    ShellRun gone = shell(conf(SERVER.address()), "-ls", "/shell/a");
    assertEquals(1, gone.rc());
    assertTrue(gone.err(), gone.err().contains("No such file or directory"));
    ok("-rm", "-r", "/shell");
  }

  @Test
  public void putGetAndCatOfAMultiBlockFile() throws Exception {
    File local = tmp.newFile("big.bin");
    byte[] data = new byte[5 * (1 << 20) + 12345];
    new Random(1).nextBytes(data);
    Files.write(local.toPath(), data);
    ok("-D", StrataConfigKeys.BLOCK_SIZE + "=1m", "-put", local.getPath(), "/big.bin");
    assertEquals("1048576", ok("-stat", "%o", "/big.bin").out().trim());
    assertEquals(String.valueOf(data.length), ok("-stat", "%b", "/big.bin").out().trim());
    File back = new File(tmp.getRoot(), "back.bin");
    ok("-get", "/big.bin", back.getPath());
    assertArrayEquals(data, Files.readAllBytes(back.toPath()));

    StringBuilder text = new StringBuilder();
    for (int i = 0; text.length() < 3 << 20; i++) {
      text.append("line ").append(i).append(" of a text file over several blocks\n");
    }
    File txt = tmp.newFile("big.txt");
    Files.writeString(txt.toPath(), text);
    ok("-D", StrataConfigKeys.BLOCK_SIZE + "=1m", "-put", txt.getPath(), "/big.txt");
    assertEquals(text.toString(), ok("-cat", "/big.txt").out());
    ok("-rm", "/big.bin", "/big.txt");
  }

  @Test
  public void missingNamespace() throws Exception {
    ShellRun r = shell(conf(SERVER.address()), "-ls", "strata://no-such-ns/");
    assertEquals(1, r.rc());
    assertTrue(r.err(), r.err().contains("strata://no-such-ns: no such namespace"));
  }

  /** With the defaults, a wrong address is said well within 10 s (within about 3 s). */
  @Test(timeout = 10_000)
  public void unreachableServiceFailsFastAndClearly() throws Exception {
    ShellRun r = shell(conf("127.0.0.1:1"), "-ls", "/");
    assertNotEquals(0, r.rc());
    assertTrue(r.err(), r.err().contains("cannot reach the Strata namespace service at "
        + "127.0.0.1:1 (Connection refused)"));
  }

  @Test
  public void missingAddressIsExplained() throws Exception {
    Configuration conf = new Configuration();
    ShellRun r = shell(conf, "-ls", "strata://default/");
    assertNotEquals(0, r.rc());
    assertTrue(r.err(), r.err().contains(StrataConfigKeys.META_ADDRESS + " is not set"));
  }

  @Test
  public void anotherUserIsDenied() throws Exception {
    ok("-mkdir", "-p", "/private/inner");
    ok("-chmod", "700", "/private");
    // The FileSystem cache is keyed by the Hadoop user, not the token.
    FileSystem.closeAll();
    Configuration mallory = conf(SERVER.address());
    mallory.set(StrataConfigKeys.TOKEN, SERVER.cluster().token("mallory"));
    // Naming another user does not make the client that user: the token does.
    mallory.set(StrataConfigKeys.USER, System.getProperty("user.name"));
    ShellRun ls = shell(mallory, "-ls", "/private");
    assertEquals(1, ls.rc());
    assertTrue(ls.err(), ls.err().contains("permission denied"));
    ShellRun mkdir = shell(mallory, "-mkdir", "/private/x");
    assertEquals(1, mkdir.rc());
    assertTrue(mkdir.err(), mkdir.err().contains("permission denied"));
    FileSystem.closeAll();
    ok("-rm", "-r", "/private");
  }
}
