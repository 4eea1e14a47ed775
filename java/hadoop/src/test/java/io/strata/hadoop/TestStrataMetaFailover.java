package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import io.strata.core.testing.MetaGroup;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * StrataFileSystem against a real namespace service of three {@code strata meta} processes: the
 * client, given every member, follows the leader through a SIGKILL of the leader, the killed
 * member's restart on its old state, and a SIGKILL of another member (after which nothing commits
 * without the restarted one). After each step it makes directories, writes, renames and deletes
 * small (inline) files, and checks that the whole tree, listed and read back, is exactly what the
 * service acknowledged. No worker runs: small files live in their inodes.
 *
 * <p>NB: the calls right after a kill are not held back until a new leader is elected: the client
 * still names the dead leader, and its retry layer ({@code MetaCaller}) has to find the new one.
 */
public class TestStrataMetaFailover {
  private static final Duration WAIT = Duration.ofSeconds(30);

  private MetaGroup group;
  private FileSystem fs;
  // What the service acknowledged: every directory made, every file's path and content.
  private final Set<Path> dirs = new TreeSet<>();
  private final Map<Path, String> files = new TreeMap<>();

  @Before
  public void startGroup() throws Exception {
    group = MetaGroup.launch(3);
    group.createNamespace("default");
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, group.metaAddress());
    conf.set(StrataConfigKeys.TOKEN, group.token());
    fs = FileSystem.newInstance(URI.create("strata://default/"), conf);
  }

  @After
  public void stopGroup() throws IOException {
    try {
      if (fs != null) {
        fs.close();
      }
    } finally {
      if (group != null) {
        group.close();
      }
    }
  }

  @Test
  public void followsTheLeaderAcrossKillsAndARestart() throws Exception {
    round("before");
    assertTreeIsWhatWasAcknowledged();

    int first = group.awaitLeader(WAIT);
    group.kill(first);
    round("after-kill");
    assertTreeIsWhatWasAcknowledged();
    int second = group.awaitLeader(WAIT);
    assertNotEquals("the killed member still leads", first, second);

    group.startMember(first);
    round("after-restart");
    assertTreeIsWhatWasAcknowledged();
    // The restarted member catches up on what was committed while it was down ...
    long committed = group.status(group.awaitLeader(WAIT)).getCommittedIndex();
    group.awaitApplied(first, committed, WAIT);

    // ... and takes part: killing another member leaves it and one more, so nothing commits
    // without it. The one killed is the leader (so the client fails over once more), unless the
    // restarted member took the lead, which Raft allows.
    int leader = group.awaitLeader(WAIT);
    int third = 6 - first - second;
    group.kill(leader != first ? leader : third);
    round("after-second-kill");
    assertTreeIsWhatWasAcknowledged();
  }

  /** Directories, files, a rename and a delete under /tag, recorded as acknowledged. */
  private void round(String tag) throws IOException {
    Path dir = new Path("/" + tag);
    Path sub = new Path(dir, "sub");
    Path deeper = new Path(sub, "deeper");
    assertTrue(fs.mkdirs(deeper));
    dirs.add(dir);
    dirs.add(sub);
    dirs.add(deeper);
    for (int i = 0; i < 4; i++) {
      Path f = new Path(i % 2 == 0 ? dir : deeper, "file-" + i);
      String content = tag + " file " + i + "\n".repeat(i * 100);
      write(f, content);
      files.put(f, content);
    }
    Path from = new Path(dir, "file-2");
    Path to = new Path(sub, "renamed-2");
    assertTrue(fs.rename(from, to));
    files.put(to, files.remove(from));
    Path doomed = new Path(deeper, "file-3");
    assertTrue(fs.delete(doomed, false));
    files.remove(doomed);
  }

  /** Lists the whole namespace and reads every file: exactly what was acknowledged, no more. */
  private void assertTreeIsWhatWasAcknowledged() throws IOException {
    Set<Path> listedDirs = new TreeSet<>();
    Map<Path, String> listedFiles = new TreeMap<>();
    walk(new Path("/"), listedDirs, listedFiles);
    assertEquals(dirs, listedDirs);
    assertEquals(files, listedFiles);
  }

  private void walk(Path dir, Set<Path> dirsOut, Map<Path, String> filesOut) throws IOException {
    for (FileStatus st : fs.listStatus(dir)) {
      Path p = Path.getPathWithoutSchemeAndAuthority(st.getPath());
      if (st.isDirectory()) {
        dirsOut.add(p);
        walk(p, dirsOut, filesOut);
      } else {
        filesOut.put(p, read(p));
      }
    }
  }

  private void write(Path p, String content) throws IOException {
    try (FSDataOutputStream out = fs.create(p, false)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  private String read(Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
