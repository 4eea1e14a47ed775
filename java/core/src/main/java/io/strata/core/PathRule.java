package io.strata.core;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Strata's one rule for path names, as the Go client and the service apply it
 * (internal/fspath; docs/semantics.md, "Paths"). {@link #problem} is the rule of every call: a
 * path is absolute, at most {@value #MAX_PATH_LEN} bytes of UTF-8 and {@value #MAX_DEPTH}
 * components; a component is 1 to {@value #MAX_NAME_LEN} bytes, not "." or "..", without NUL;
 * one trailing slash is accepted. {@link #newNameProblem} adds the rule of the calls that create
 * entries (create, mkdirs, a rename's destination): no ':' (HDFS's rule) and no control
 * character. The cases in internal/fspath/testdata/paths.txt are checked against both languages.
 */
public final class PathRule {
  /** Bytes of one component, as HDFS's default. */
  public static final int MAX_NAME_LEN = 255;

  /** Bytes of a whole path, as HDFS's default. */
  public static final int MAX_PATH_LEN = 8000;

  /** Components of a path, as HDFS's default. */
  public static final int MAX_DEPTH = 1000;

  /** Begins the message of every path the rule refuses, as the service's do. */
  public static final String PREFIX = "invalid path: ";

  private PathRule() {}

  /** Returns why {@code path} breaks the rule of every call, or empty when it does not. */
  public static Optional<String> problem(String path) {
    if (!path.startsWith("/")) {
      return Optional.of(quote(path) + " is not an absolute path");
    }
    for (int i = 0; i < path.length(); i++) {
      char ch = path.charAt(i);
      if (Character.isHighSurrogate(ch) && i + 1 < path.length()
          && Character.isLowSurrogate(path.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(ch)) {
        return Optional.of("the path holds a lone surrogate, which UTF-8 cannot encode");
      }
    }
    int bytes = utf8Length(path);
    if (bytes > MAX_PATH_LEN) {
      return Optional.of("the path is " + bytes + " bytes long, longer than " + MAX_PATH_LEN);
    }
    String rest = path.substring(1);
    if (rest.endsWith("/")) {
      rest = rest.substring(0, rest.length() - 1);
    }
    if (rest.isEmpty()) {
      return Optional.empty();
    }
    String[] parts = rest.split("/", -1);
    if (parts.length > MAX_DEPTH) {
      return Optional.of("the path has " + parts.length + " components, more than " + MAX_DEPTH);
    }
    for (String c : parts) {
      Optional<String> p = nameProblem(c);
      if (p.isPresent()) {
        return p;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> nameProblem(String c) {
    if (c.isEmpty()) {
      return Optional.of("a name is empty (two slashes in a row)");
    }
    if (c.equals(".") || c.equals("..")) {
      return Optional.of(quote(c) + " is not allowed as a name");
    }
    int bytes = utf8Length(c);
    if (bytes > MAX_NAME_LEN) {
      int[] head = c.codePoints().limit(40).toArray();
      return Optional.of("the name " + quote(new String(head, 0, head.length)) + "... is " + bytes
          + " bytes long, longer than " + MAX_NAME_LEN);
    }
    if (c.indexOf('\0') >= 0) {
      return Optional.of("the name " + quote(c) + " holds a NUL character");
    }
    return Optional.empty();
  }

  /**
   * Returns why {@code path}, whose missing components a call would create, breaks the rule: of
   * every call, or of new names. Empty when it does not.
   */
  public static Optional<String> newNameProblem(String path) {
    Optional<String> p = problem(path);
    if (p.isPresent()) {
      return p;
    }
    for (String c : path.split("/")) {
      if (c.indexOf(':') >= 0) {
        return Optional.of("the name " + quote(c)
            + " holds ':', which a name may not hold (as in HDFS)");
      }
      int[] control = c.codePoints().filter(Character::isISOControl).limit(1).toArray();
      if (control.length > 0) {
        return Optional.of(String.format(java.util.Locale.ROOT,
            "the name %s holds the control character U+%04X, which a name may not hold",
            quote(c), control[0]));
      }
    }
    return Optional.empty();
  }

  private static int utf8Length(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** Quotes {@code s} as Go's %q does for what a name may hold, so messages read alike. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    s.codePoints().forEach(cp -> {
      switch (cp) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        case '\r' -> b.append("\\r");
        default -> {
          if (cp < 0x20 || cp == 0x7f) {
            b.append(String.format(java.util.Locale.ROOT, "\\x%02x", cp));
          } else if (Character.isISOControl(cp)) {
            b.append(String.format(java.util.Locale.ROOT, "\\u%04x", cp));
          } else {
            b.appendCodePoint(cp);
          }
        }
      }
    });
    return b.append('"').toString();
  }
}
