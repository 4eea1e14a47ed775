package io.strata.hadoop;

import io.strata.core.StrataPath;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.fs.Path;

/**
 * The Hadoop paths of one listing's entries: each the {@link Path} that {@link
 * StrataFileSystem#hadoopPath} makes, built from its directory's URI, parsed once, and its name.
 * A URI's constructors quote and parse the whole string (with its authority); resolving a name
 * against the directory's URI copies the directory's parts and parses only the name, and that
 * was half of the CPU a walk ({@code hadoop fs -ls -R}) spent on each entry. A name that would
 * need quoting or could read as a scheme takes {@link StrataFileSystem#hadoopPath}'s way. Not
 * safe for concurrent use.
 */
final class EntryPaths {
  private final String scheme;
  private final String namespace;
  /** The last directory seen, with its trailing slash, and its URI; null before the first. */
  private String dir;
  private URI dirUri;

  EntryPaths(String scheme, String namespace) {
    this.scheme = scheme;
    this.namespace = namespace;
  }

  /** The Hadoop path of {@code p}. */
  Path of(StrataPath p) {
    String s = p.path();
    int slash = s.lastIndexOf('/');
    if (slash < 0 || slash == s.length() - 1 || !plain(s, slash + 1)) {
      return StrataFileSystem.hadoopPath(scheme, namespace, p);
    }
    try {
      if (dir == null || dir.length() != slash + 1 || !s.startsWith(dir)) {
        dir = s.substring(0, slash + 1);
        dirUri = new URI(scheme, namespace.isEmpty() ? null : namespace, dir, null, null);
      }
      return new Path(dirUri.resolve(new URI(s.substring(slash + 1))));
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }

  /**
   * Whether the name from {@code from} to the end of {@code s} stands in a URI as it is, a
   * relative path of one segment: unreserved characters and those of a path segment but ':'
   * (which would make it a scheme), '%', '/' and '?' or '#'. Not "." or "..", which resolving
   * would remove (a path never holds them, but the check is cheap).
   */
  static boolean plain(String s, int from) {
    int n = s.length();
    if (from >= n || s.charAt(from) == '.' && (n - from == 1 || n - from == 2
        && s.charAt(from + 1) == '.')) {
      return false;
    }
    for (int i = from; i < n; i++) {
      char c = s.charAt(i);
      if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
          || c == '-' || c == '_' || c == '.' || c == '~' || c == '!' || c == '*' || c == '\''
          || c == '(' || c == ')' || c == '@' || c == '&' || c == '=' || c == '+' || c == '$'
          || c == ',' || c == ';')) {
        return false;
      }
    }
    return true;
  }
}
