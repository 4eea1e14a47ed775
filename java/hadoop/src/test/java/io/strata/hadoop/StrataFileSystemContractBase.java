package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.fs.FileSystemContractBaseTest;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * Hadoop's older FileSystem contract suite (FileSystemContractBaseTest, which HDFS and S3A run
 * too), with 1 MiB blocks so that its write/read tests span several blocks, on the namespace at
 * {@link #uri} of the service at {@link #address}. Three of its tests expect namespace answers
 * that Strata deliberately gives otherwise (docs/java.md, "Behaviour"); they are overridden to
 * assert what Strata does instead, each saying why.
 */
public abstract class StrataFileSystemContractBase extends FileSystemContractBaseTest {
  /** The service. */
  protected abstract String address();

  /** The namespace the suite runs in. */
  protected abstract URI uri();

  @Before
  public void setUp() throws Exception {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, address());
    conf.set(StrataConfigKeys.TOKEN, io.strata.core.testing.DevCluster.tokenOf(address()));
    fs = FileSystem.newInstance(uri(), conf);
  }

  @Override
  @After
  public void tearDown() throws Exception {
    try {
      super.tearDown();
    } finally {
      if (fs != null) {
        fs.close();
      }
    }
  }

  @Override
  protected int getBlockSize() {
    return 1 << 20;
  }

  /**
   * The umask is read from the configuration when the file system is initialized (as HDFS
   * reads it per client), not at each call as the base test assumes; this asserts that a
   * umask set before initialization applies.
   */
  @Override
  @Test
  public void testMkdirsWithUmask() throws Exception {
    Configuration conf = new Configuration();
    conf.set(StrataConfigKeys.META_ADDRESS, address());
    conf.set(StrataConfigKeys.TOKEN, io.strata.core.testing.DevCluster.tokenOf(address()));
    conf.set(CommonConfigurationKeys.FS_PERMISSIONS_UMASK_KEY, "062");
    try (FileSystem masked = FileSystem.newInstance(uri(), conf)) {
      Path dir = path("testMkdirsWithUmask/subdir");
      assertTrue(masked.mkdirs(dir, new FsPermission((short) 0777)));
      assertEquals(new FsPermission((short) 0715), masked.getFileStatus(dir).getPermission());
    }
  }

  /**
   * Strata answers true for a rename of a directory to itself, as it does for a file (and as
   * POSIX rename does); the base test expects false. The directory must be untouched.
   */
  @Override
  @Test
  public void testRenameDirToSelf() throws Exception {
    Path dir = path("testRenameDirToSelf/dir");
    assertTrue(fs.mkdirs(dir));
    createFile(new Path(dir, "file"));
    assertTrue(fs.rename(dir, dir));
    assertTrue(fs.exists(new Path(dir, "file")));
  }

  /**
   * A rename of a directory into its own subtree throws (RENAME_LOOP), as in HDFS, where the base
   * test expects false. Nothing moves.
   */
  @Override
  @Test
  public void testRenameChildDirForbidden() throws Exception {
    Path parent = path("testRenameChildDirForbidden/parent");
    Path child = new Path(parent, "child");
    assertTrue(fs.mkdirs(child));
    assertThrows(IOException.class, () -> fs.rename(parent, new Path(child, "moved")));
    assertTrue(fs.exists(child));
    assertFalse(fs.exists(new Path(child, "moved")));
  }
}
