package io.strata.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.net.URI;
import org.junit.Test;

public class StrataPathTest {
  @Test
  public void parsesTheThreeForms() {
    assertEquals(new StrataPath("ns", "/a/b"), StrataPath.parse("strata://ns/a/b"));
    assertEquals(new StrataPath("", "/a"), StrataPath.parse("strata:///a"));
    assertEquals(new StrataPath("", "/a"), StrataPath.parse("/a"));
    assertEquals(StrataPath.root("ns"), StrataPath.parse("strata://ns"));
    assertEquals(StrataPath.root("ns"), StrataPath.parse("strata://ns/"));
  }

  @Test
  public void rejectsRelativeAndForeignPaths() {
    assertThrows(IllegalArgumentException.class, () -> StrataPath.parse("a/b"));
    assertThrows(IllegalArgumentException.class, () -> StrataPath.parse("hdfs://nn/a"));
    assertThrows(IllegalArgumentException.class, () -> StrataPath.of(URI.create("s3a://b/k")));
  }

  @Test
  public void dropsOneTrailingSlash() {
    assertEquals("/a/b", new StrataPath("", "/a/b/").path());
    assertEquals("/", new StrataPath("", "/").path());
  }

  @Test
  public void fromUri() {
    assertEquals(new StrataPath("ns", "/x"), StrataPath.of(URI.create("strata://ns/x")));
    assertEquals(new StrataPath("", "/x"), StrataPath.of(URI.create("strata:///x")));
    assertEquals(StrataPath.root("ns"), StrataPath.of(URI.create("strata://ns")));
  }

  @Test
  public void navigation() {
    StrataPath p = new StrataPath("ns", "/a/b");
    assertEquals("b", p.name());
    assertEquals(new StrataPath("ns", "/a"), p.parent());
    assertEquals(StrataPath.root("ns"), p.parent().parent());
    assertEquals(StrataPath.root("ns"), StrataPath.root("ns").parent());
    assertEquals("", StrataPath.root("ns").name());
    assertEquals(new StrataPath("ns", "/c"), StrataPath.root("ns").child("c"));
    assertEquals(new StrataPath("ns", "/a/b/c"), p.child("c"));
    assertThrows(IllegalArgumentException.class, () -> p.child("x/y"));
    assertThrows(IllegalArgumentException.class, () -> p.child(""));
    assertEquals("strata://ns/a/b", p.toString());
  }

  @Test
  public void containment() {
    StrataPath a = new StrataPath("ns", "/a");
    assertTrue(a.contains(new StrataPath("ns", "/a")));
    assertTrue(a.contains(new StrataPath("ns", "/a/b")));
    assertFalse(a.contains(new StrataPath("ns", "/ab")));
    assertFalse(a.contains(new StrataPath("other", "/a/b")));
    assertTrue(StrataPath.root("ns").contains(a));
  }
}
