package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.Test;

/** The FileContext API through StrataFs (DelegateToFileSystem). */
public class TestStrataFs extends StrataTestBase {
  private FileContext fc() throws IOException {
    Configuration c = conf();
    c.set("fs.AbstractFileSystem.strata.impl", StrataFs.class.getName());
    return FileContext.getFileContext(URI.create("strata://default/"), c);
  }

  private void create(FileContext fc, Path p, String s) throws IOException {
    try (FSDataOutputStream out = fc.create(p, EnumSet.of(CreateFlag.CREATE,
        CreateFlag.OVERWRITE), Options.CreateOpts.createParent())) {
      out.write(s.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  public void basicOperations() throws IOException {
    FileContext fc = fc();
    Path d = new Path(base, "fc/d");
    fc.mkdir(d, FsPermission.getDirDefault(), true);
    create(fc, new Path(d, "f"), "hello");
    assertEquals(5, fc.getFileStatus(new Path(d, "f")).getLen());
    assertEquals(1, fc.util().listStatus(d).length);
    assertEquals("hello", read(fs, new Path(d, "f")));
    assertTrue(fc.delete(d, true));
    assertFalse(fc.util().exists(d));
  }

  @Test
  public void renameNeverEntersTheDestinationAndOverwritesOnlyWhenAsked() throws IOException {
    FileContext fc = fc();
    Path a = new Path(base, "a");
    Path b = new Path(base, "b");
    create(fc, a, "A");
    create(fc, b, "B");
    assertThrows(FileAlreadyExistsException.class, () -> fc.rename(a, b));
    fc.rename(a, b, Options.Rename.OVERWRITE);
    assertEquals("A", read(fs, b));
    assertFalse(fs.exists(a));
    Path dir = new Path(base, "dir");
    fc.mkdir(dir, FsPermission.getDirDefault(), true);
    assertThrows(FileAlreadyExistsException.class, () -> fc.rename(b, dir));
  }
}
