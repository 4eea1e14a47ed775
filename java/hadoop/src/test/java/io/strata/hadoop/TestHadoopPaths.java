package io.strata.hadoop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.strata.core.StrataPath;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/** The Hadoop paths of Strata paths: what Path's own constructor makes of them. */
public class TestHadoopPaths {
  private static final String[] PATHS = {"/", "/a", "/a/b/c", "/with space/x", "/per%cent",
      "/été/日本", "/a:b/c", "/q?x#y", "/.hidden/..x", "/a\\\\b", "/plus+and&amp=eq", "/x/..."};

  /** Names a listing may show, plain or not. */
  private static final String[] NAMES = {"f", "f0", "part-00000.snappy.parquet", "_SUCCESS",
      ".hidden", "..x", "...", "a b", "50%", "%41", "a:b", ":", "q?x", "h#y", "été", "日本",
      "a\\b", "x!*'()@&=+$,;~", "tab\there", "{}", "[x]", "a|b", "a\"b", "<>", "`", "^"};

  private static void assertSame(String what, Path want, Path got) {
    assertEquals(what, want, got);
    assertEquals(what, want.toUri(), got.toUri());
    assertEquals(what, want.toString(), got.toString());
    assertEquals(what, want.toUri().getRawPath(), got.toUri().getRawPath());
    assertEquals(what, want.getName(), got.getName());
    assertEquals(what, want.getParent(), got.getParent());
  }

  @Test
  public void sameAsPathsOwnConstructor() {
    for (String ns : new String[] {"", "default", "lake"}) {
      for (String p : PATHS) {
        Path want = new Path("strata", ns.isEmpty() ? null : ns, p);
        Path got = StrataFileSystem.hadoopPath("strata", ns, new StrataPath(ns, p));
        assertSame(p, want, got);
      }
    }
  }

  /** A listing's entries, built from their directory's URI: as Path's own constructor. */
  @Test
  public void entryPathsSameAsPathsOwnConstructor() {
    for (String ns : new String[] {"", "default", "lake"}) {
      EntryPaths paths = new EntryPaths("strata", ns);
      for (String dir : PATHS) {
        StrataPath d = new StrataPath(ns, dir);
        for (String name : NAMES) {
          StrataPath p = d.child(name);
          Path want = new Path("strata", ns.isEmpty() ? null : ns, p.path());
          assertSame(ns + " " + p.path(), want, paths.of(p));
        }
      }
      // Entries of directories visited in turn, back and forth, and a prefix of another.
      for (String p : new String[] {"/a/x", "/ab/x", "/a/y", "/a/b/z", "/a/z", "/f"}) {
        StrataPath sp = new StrataPath(ns, p);
        assertSame(ns + " " + p, new Path("strata", ns.isEmpty() ? null : ns, p), paths.of(sp));
      }
    }
  }

  @Test
  public void plainNames() {
    assertTrue(EntryPaths.plain("/d/part-00000.c000", 3));
    assertTrue(EntryPaths.plain("/d/...", 3));
    for (String name : new String[] {"", ".", "..", "a:b", "a%b", "a b", "é", "a?b", "a#b"}) {
      assertFalse(name, EntryPaths.plain("/d/" + name, 3));
    }
  }
}
