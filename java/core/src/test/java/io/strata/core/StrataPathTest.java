package io.strata.core;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
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

  /** The cases of internal/fspath/testdata/paths.txt, which the Go tests run too. */
  @Test
  public void followsTheSharedRule() throws IOException {
    Path table = Path.of("..", "..", "internal", "fspath", "testdata", "paths.txt");
    int checked = 0;
    for (String line : Files.readAllLines(table, StandardCharsets.UTF_8)) {
      line = line.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int sp = line.indexOf(' ');
      String verdict = line.substring(0, sp);
      Optional<String> p = unquoteGo(line.substring(sp).strip());
      if (p.isEmpty()) {
        continue; // not UTF-8: no Java string holds it
      }
      String path = p.get();
      String got = PathRule.problem(path).isPresent() ? "invalid"
          : PathRule.newNameProblem(path).isPresent() ? "lookup" : "new";
      assertEquals(line, verdict, got);
      if (got.equals("invalid")) {
        assertThrows(line, IllegalArgumentException.class, () -> new StrataPath("", path));
      } else {
        assertEquals(line, got.equals("lookup"),
            new StrataPath("", path).newNameProblem().isPresent());
      }
      checked++;
    }
    assertTrue("only " + checked + " cases", checked > 30);
  }

  @Test
  public void reasonsReadAsTheServicesDo() {
    assertEquals(Optional.of("the name \"a:b\" holds ':', which a name may not hold (as in HDFS)"),
        PathRule.newNameProblem("/x/a:b"));
    assertEquals(Optional.of("the name \"nl\\nx\" holds the control character U+000A, which a "
        + "name may not hold"), PathRule.newNameProblem("/nl\nx"));
    assertEquals(Optional.of("a name is empty (two slashes in a row)"), PathRule.problem("/a//b"));
    assertEquals(Optional.of("\"..\" is not allowed as a name"), PathRule.problem("/a/.."));
    String deep = "/d".repeat(PathRule.MAX_DEPTH);
    assertEquals(Optional.empty(), PathRule.newNameProblem(deep));
    assertTrue(PathRule.problem(deep + "/d").isPresent());
    String longName = "/" + "n".repeat(PathRule.MAX_NAME_LEN);
    assertEquals(Optional.empty(), PathRule.newNameProblem(longName));
    assertTrue(PathRule.problem(longName + "n").isPresent());
  }

  /**
   * Decodes a Go string literal; empty when its bytes are not UTF-8. Knows what the table uses:
   * the escapes of quote, newline, tab, return, a byte in hex (x) and a code point (u), and
   * literal characters.
   */
  private static Optional<String> unquoteGo(String lit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    String body = lit.substring(1, lit.length() - 1);
    for (int i = 0; i < body.length(); i++) {
      char ch = body.charAt(i);
      if (ch != '\\') {
        int cp = body.codePointAt(i);
        i += Character.charCount(cp) - 1;
        out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
        continue;
      }
      char e = body.charAt(++i);
      switch (e) {
        case 'n' -> out.write('\n');
        case 't' -> out.write('\t');
        case 'r' -> out.write('\r');
        case 'x' -> {
          out.write(Integer.parseInt(body.substring(i + 1, i + 3), 16));
          i += 2;
        }
        case 'u' -> {
          int cp = Integer.parseInt(body.substring(i + 1, i + 5), 16);
          out.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
          i += 4;
        }
        default -> out.write(e);
      }
    }
    try {
      return Optional.of(StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray())).toString());
    } catch (CharacterCodingException ex) {
      return Optional.empty();
    }
  }
}
