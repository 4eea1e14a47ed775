package io.strata.hadoop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import io.strata.core.error.AlreadyBeingCreatedException;
import io.strata.core.error.LeaseExpiredException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.InvalidPathException;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.AccessControlException;
import org.junit.Test;

/** The namespace operations of StrataFileSystem: HDFS's answers and exceptions. */
public class TestStrataFileSystem extends StrataTestBase {
  @Test
  public void registeredThroughTheServiceLoader() throws IOException {
    assertSame(StrataFileSystem.class, FileSystem.getFileSystemClass("strata", conf()));
    assertEquals("strata", fs.getScheme());
    assertEquals("strata://default", fs.getUri().toString());
    try (FileSystem dflt = newFs("strata:///", conf())) {
      assertEquals("strata:///", dflt.getUri().toString());
    }
  }

  @Test
  public void tripleSlashIsTheDefaultNamespace() throws IOException {
    try (FileSystem dflt = newFs("strata:///", conf())) {
      write(dflt, new Path(base, "viaDefault"), "x");
      Path q = dflt.makeQualified(new Path(base, "viaDefault"));
      assertEquals("strata", q.toUri().getScheme());
      assertEquals(null, q.toUri().getAuthority());
      assertEquals(q, dflt.getFileStatus(new Path(base, "viaDefault")).getPath());
    }
    assertEquals("x", read(fs, new Path(base, "viaDefault")));
  }

  @Test
  public void unknownNamespaceFailsAtInitialize() {
    FileNotFoundException e = assertThrows(FileNotFoundException.class,
        () -> newFs("strata://no-such-ns/", conf()));
    assertTrue(e.getMessage(), e.getMessage().contains("no such namespace"));
  }

  @Test
  public void relativePathsResolveAgainstTheHomeDirectory() throws IOException {
    String user = fs.getHomeDirectory().getName();
    assertEquals("strata://default/user/" + user, fs.getHomeDirectory().toString());
    assertEquals(fs.getHomeDirectory(), fs.getWorkingDirectory());
    fs.setWorkingDirectory(base);
    write(fs, new Path("rel"), "r");
    assertEquals("r", read(fs, new Path(base, "rel")));
  }

  @Test
  public void statusFields() throws IOException {
    Path f = new Path(base, "f");
    try (FSDataOutputStream out = fs.create(f, FsPermission.createImmutable((short) 0640), true,
        4096, (short) 3, 1 << 20, null)) {
      out.write(new byte[] {1, 2, 3});
    }
    FileStatus st = fs.getFileStatus(f);
    assertTrue(st.isFile());
    assertEquals(3, st.getLen());
    assertEquals(3, st.getReplication());
    assertEquals(1 << 20, st.getBlockSize());
    assertEquals((short) 0640, st.getPermission().toShort());
    assertEquals(fs.makeQualified(f), st.getPath());
    assertTrue(st.getModificationTime() > 0);
    FileStatus dir = fs.getFileStatus(base);
    assertTrue(dir.isDirectory());
    assertEquals((short) 0755, dir.getPermission().toShort());
  }

  @Test
  public void renameFollowsHdfs() throws IOException {
    Path a = new Path(base, "a");
    Path dir = new Path(base, "dir");
    write(fs, a, "a");
    fs.mkdirs(dir);
    assertFalse("missing source", fs.rename(new Path(base, "missing"), new Path(base, "x")));
    assertFalse("missing destination parent", fs.rename(a, new Path(base, "no/such/x")));
    write(fs, new Path(base, "b"), "b");
    assertFalse("existing destination file", fs.rename(a, new Path(base, "b")));
    assertFalse("destination under a file", fs.rename(a, new Path(base, "b/x")));
    assertFalse("the root", fs.rename(new Path("/"), new Path(base, "root")));
    assertTrue("into a directory", fs.rename(a, dir));
    assertEquals("a", read(fs, new Path(dir, "a")));
    assertTrue("to itself", fs.rename(new Path(dir, "a"), new Path(dir, "a")));
    assertThrows("into its own subtree", IOException.class,
        () -> fs.rename(dir, new Path(dir, "sub")));
    assertTrue(fs.rename(dir, new Path(base, "moved")));
    assertTrue(fs.exists(new Path(base, "moved/a")));
  }

  @Test
  public void deleteAndMkdirs() throws IOException {
    assertFalse(fs.delete(new Path(base, "missing"), true));
    Path d = new Path(base, "d");
    assertTrue(fs.mkdirs(new Path(d, "e/f")));
    assertTrue("mkdirs of an existing directory", fs.mkdirs(d));
    assertThrows(PathIsNotEmptyDirectoryException.class, () -> fs.delete(d, false));
    write(fs, new Path(base, "file"), "x");
    assertThrows(FileAlreadyExistsException.class, () -> fs.mkdirs(new Path(base, "file")));
    assertThrows(ParentNotDirectoryException.class,
        () -> fs.mkdirs(new Path(base, "file/sub")));
    assertTrue(fs.delete(d, true));
    assertFalse(fs.exists(d));
    assertFalse("the root is never deleted", fs.delete(new Path("/"), true));
  }

  @Test
  public void createErrors() throws IOException {
    Path f = new Path(base, "f");
    write(fs, f, "x");
    assertThrows(FileAlreadyExistsException.class, () -> fs.create(f, false));
    assertThrows(FileAlreadyExistsException.class, () -> fs.create(base, true));
    assertThrows(ParentNotDirectoryException.class, () -> fs.create(new Path(f, "child")));
    assertThrows(FileNotFoundException.class, () -> fs.createNonRecursive(
        new Path(base, "no/parent"), true, 4096, (short) 1, 1024, null));
    try (FSDataOutputStream out = fs.createNonRecursive(new Path(base, "nr"),
        FsPermission.getFileDefault(), EnumSet.of(CreateFlag.CREATE), 4096, (short) 1, 1024,
        null)) {
      out.write('n');
    }
    assertEquals("n", read(fs, new Path(base, "nr")));
    assertThrows(FileNotFoundException.class, () -> fs.open(base));
    assertThrows(FileNotFoundException.class, () -> fs.open(new Path(base, "missing")));
    assertThrows(FileNotFoundException.class, () -> fs.getFileStatus(new Path(base, "m")));
    assertThrows(FileNotFoundException.class, () -> fs.listStatus(new Path(base, "m")));
    String longName = "x".repeat(300);
    assertThrows(InvalidPathException.class, () -> fs.mkdirs(new Path(base, longName)));
  }

  /** The path rule (docs/semantics.md, "Paths"), as the Go client and the service apply it. */
  @Test
  public void namesTheRuleRefuses() throws IOException {
    Path colon = new Path(base + "/a:b");
    InvalidPathException e = assertThrows(InvalidPathException.class, () -> fs.mkdirs(colon));
    assertTrue(e.getMessage(), e.getMessage().contains("the name \"a:b\" holds ':'"));
    assertThrows(InvalidPathException.class, () -> fs.create(new Path(base + "/nl\nx")));
    Path f = new Path(base, "f");
    write(fs, f, "x");
    assertThrows(InvalidPathException.class, () -> fs.rename(f, new Path(base + "/t\tx")));
    // Looking such a name up is no error: it may have come from elsewhere.
    assertFalse(fs.exists(colon));
    assertThrows(InvalidPathException.class, () -> fs.getFileStatus(new Path("/..")));
    assertEquals(1, fs.listStatus(base).length);
  }

  @Test
  public void anotherUserGetsAccessControlException() throws IOException {
    Path priv = new Path(base, "private");
    fs.mkdirs(priv);
    fs.setPermission(priv, new FsPermission((short) 0700));
    Configuration c = conf();
    c.set(StrataConfigKeys.TOKEN, SERVER.cluster().token("eve", "eve", "staff"));
    try (FileSystem eve = newFs("strata://default/", c)) {
      assertEquals("strata://default/user/eve", eve.getHomeDirectory().toString());
      assertThrows(AccessControlException.class, () -> eve.listStatus(priv));
      assertThrows(AccessControlException.class, () -> eve.create(new Path(priv, "x")));
      assertThrows(AccessControlException.class,
          () -> eve.setPermission(base, new FsPermission((short) 0777)));
    }
  }

  @Test
  public void attributes() throws IOException {
    Path f = new Path(base, "f");
    write(fs, f, "x");
    fs.setPermission(f, new FsPermission((short) 01751));
    fs.setOwner(f, "alice", "staff");
    fs.setTimes(f, 1_234_000L, -1);
    FileStatus st = fs.getFileStatus(f);
    assertEquals((short) 01751, st.getPermission().toShort());
    assertTrue(st.getPermission().getStickyBit());
    assertEquals("alice", st.getOwner());
    assertEquals("staff", st.getGroup());
    assertEquals(1_234_000L, st.getModificationTime());
    fs.setOwner(f, null, "other");
    assertEquals("alice", fs.getFileStatus(f).getOwner());
    assertEquals("other", fs.getFileStatus(f).getGroup());
  }

  @Test
  public void listingsArePagedFromTheServer() throws IOException {
    Configuration c = conf();
    c.setInt(StrataConfigKeys.LIST_PAGE_SIZE, 2);
    try (FileSystem small = newFs("strata://default/", c)) {
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        write(small, new Path(base, "f" + i), "x".repeat(i));
        want.add("f" + i);
      }
      small.mkdirs(new Path(base, "g"));
      want.add("g");
      List<String> got = new ArrayList<>();
      RemoteIterator<FileStatus> it = small.listStatusIterator(base);
      while (it.hasNext()) {
        got.add(it.next().getPath().getName());
      }
      assertEquals(want, got);
      assertEquals(6, small.listStatus(base).length);
      RemoteIterator<LocatedFileStatus> located = small.listLocatedStatus(base);
      int files = 0;
      while (located.hasNext()) {
        LocatedFileStatus st = located.next();
        if (st.isFile()) {
          files++;
          assertEquals(st.getLen() == 0 ? 0 : 1, st.getBlockLocations().length);
          if (st.getLen() > 0) {
            assertEquals(st.getLen(), st.getBlockLocations()[0].getLength());
          }
        }
      }
      assertEquals(5, files);
      FileStatus[] self = small.listStatus(new Path(base, "f1"));
      assertEquals(1, self.length);
      assertEquals(small.makeQualified(new Path(base, "f1")), self[0].getPath());
    }
  }

  @Test
  public void contentSummaryComesFromTheServer() throws IOException {
    fs.mkdirs(new Path(base, "d/e"));
    write(fs, new Path(base, "d/x"), "12345");
    write(fs, new Path(base, "d/e/y"), "123");
    ContentSummary cs = fs.getContentSummary(new Path(base, "d"));
    assertEquals(8, cs.getLength());
    assertEquals(2, cs.getFileCount());
    assertEquals(2, cs.getDirectoryCount());
    assertEquals(8, cs.getSpaceConsumed());
    ContentSummary file = fs.getContentSummary(new Path(base, "d/x"));
    assertEquals(5, file.getLength());
    assertEquals(1, file.getFileCount());
    assertEquals(0, file.getDirectoryCount());
  }

  @Test
  public void leasesAndRecovery() throws IOException {
    Path f = new Path(base, "leased");
    StrataFileSystem sfs = (StrataFileSystem) fs;
    try (FileSystem other = newFs("strata://default/", conf())) {
      FSDataOutputStream out = fs.create(f);
      out.write('a');
      assertFalse(sfs.isFileClosed(f));
      assertThrows(AlreadyBeingCreatedException.class, () -> other.create(f, true));
      assertTrue(((StrataFileSystem) other).recoverLease(f));
      assertTrue(sfs.isFileClosed(f));
      assertThrows("the writer lost its lease", LeaseExpiredException.class, out::close);
    }
    assertArrayEquals(new byte[0], fs.open(f).readAllBytes());
  }
}
