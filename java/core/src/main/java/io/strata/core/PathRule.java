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
    if (plain(path, false)) {
      return Optional.empty();
    }
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
    if (plain(path, true)) {
      return Optional.empty();
    }
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

  /**
   * Whether {@code path} surely keeps the rule (of new names too if {@code newName}), in one
   * pass: absolute, printable ASCII, names of 1 to {@value #MAX_NAME_LEN} characters other than
   * "." and "..", one trailing slash at most. What it does not accept, {@link #problem} and
   * {@link #newNameProblem} judge in full. NB: every call checks its path, and most paths are
   * plain: the full check's splits and UTF-8 encodings were a tenth of a getFileStatus's CPU in
   * the Hadoop client.
   */
  private static boolean plain(String path, boolean newName) {
    int n = path.length();
    if (n == 0 || n > MAX_PATH_LEN || path.charAt(0) != '/') {
      return false;
    }
    int depth = 0;
    int from = 1;
    for (int i = 1; i <= n; i++) {
      char ch = i < n ? path.charAt(i) : '/';
      if (ch < 0x20 || ch >= 0x7f || (newName && ch == ':')) {
        return false;
      }
      if (ch != '/' || (i == n && from == n)) {
        continue;
      }
      int len = i - from;
      if (len == 0 || len > MAX_NAME_LEN || (path.charAt(from) == '.' && (len == 1
          || (len == 2 && path.charAt(from + 1) == '.')))) {
        return false;
      }
      depth++;
      from = i + 1;
    }
    return depth <= MAX_DEPTH;
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
