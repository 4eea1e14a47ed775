package io.strata.hadoop;

import static org.junit.Assert.assertEquals;

import io.strata.core.StrataPath;
import org.apache.hadoop.fs.Path;
import org.junit.Test;

/** The Hadoop paths of Strata paths: what Path's own constructor makes of them. */
public class TestHadoopPaths {
  @Test
  public void sameAsPathsOwnConstructor() {
    String[] paths = {"/", "/a", "/a/b/c", "/with space/x", "/per%cent", "/été/日本",
        "/a:b/c", "/q?x#y", "/.hidden/..x", "/a\\\\b", "/plus+and&amp=eq"};
    for (String ns : new String[] {"", "default", "lake"}) {
      for (String p : paths) {
        Path want = new Path("strata", ns.isEmpty() ? null : ns, p);
        Path got = StrataFileSystem.hadoopPath("strata", ns, new StrataPath(ns, p));
        assertEquals(p, want, got);
        assertEquals(p, want.toUri(), got.toUri());
        assertEquals(p, want.toString(), got.toString());
      }
    }
  }
}
