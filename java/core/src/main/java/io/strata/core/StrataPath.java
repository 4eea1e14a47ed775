package io.strata.core;

import java.net.URI;
import java.util.Objects;

/**
 * An absolute path in one namespace: {@code strata://<namespace>/<path>}. The empty namespace is
 * the service's default ({@code strata:///path} or a bare {@code /path}). The path follows the
 * rule of every call ({@link PathRule#problem}; docs/semantics.md, "Paths"), checked here as the
 * service checks it: an empty component ({@code /a//b}), "." or ".." is refused, not cleaned
 * (Hadoop's {@code Path} cleans what a user types before it gets here). One trailing slash is
 * dropped.
 *
 * @param namespace the namespace, "" for the default one
 * @param path the absolute path within it, "/" for the root
 */
public record StrataPath(String namespace, String path) {
  /** The URI scheme of Strata paths. */
  public static final String SCHEME = "strata";

  /** Checks and normalises the components. */
  public StrataPath {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(path, "path");
    String problem = PathRule.problem(path).orElse(null);
    if (problem != null) {
      throw new IllegalArgumentException(PathRule.PREFIX + problem);
    }
    if (path.length() > 1 && path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
  }

  /** Returns the root of {@code namespace}. */
  public static StrataPath root(String namespace) {
    return new StrataPath(namespace, "/");
  }

  /**
   * Parses {@code strata://ns/p}, {@code strata:///p} or {@code /p} (the default namespace).
   *
   * @throws IllegalArgumentException for another scheme or a relative path
   */
  public static StrataPath parse(String s) {
    String prefix = SCHEME + "://";
    if (s.startsWith(prefix)) {
      String rest = s.substring(prefix.length());
      int slash = rest.indexOf('/');
      if (slash < 0) {
        return root(rest);
      }
      return new StrataPath(rest.substring(0, slash), rest.substring(slash));
    }
    if (s.contains("://")) {
      throw new IllegalArgumentException("not a " + SCHEME + ":// path: " + s);
    }
    return new StrataPath("", s);
  }

  /**
   * Returns the path of {@code uri}: its authority is the namespace (none: the default), its
   * path the path. The URI's path must be absolute or empty (the root).
   */
  public static StrataPath of(URI uri) {
    if (uri.getScheme() != null && !SCHEME.equalsIgnoreCase(uri.getScheme())) {
      throw new IllegalArgumentException("not a " + SCHEME + ":// URI: " + uri);
    }
    String ns = uri.getAuthority() == null ? "" : uri.getAuthority();
    String p = uri.getPath() == null || uri.getPath().isEmpty() ? "/" : uri.getPath();
    return new StrataPath(ns, p);
  }

  /** Reports whether this is the root of its namespace. */
  public boolean isRoot() {
    return "/".equals(path);
  }

  /** Returns the last component, "" for the root. */
  public String name() {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  /** Returns the parent directory; the root is its own parent. */
  public StrataPath parent() {
    int i = path.lastIndexOf('/');
    return i <= 0 ? root(namespace) : new StrataPath(namespace, path.substring(0, i));
  }

  /** Returns the entry {@code name} inside this directory. */
  public StrataPath child(String name) {
    if (name.isEmpty() || name.indexOf('/') >= 0) {
      throw new IllegalArgumentException("not a path component: \"" + name + "\"");
    }
    return new StrataPath(namespace, isRoot() ? "/" + name : path + "/" + name);
  }

  /** Reports whether {@code other} is this path or lies below it, in the same namespace. */
  public boolean contains(StrataPath other) {
    if (!namespace.equals(other.namespace)) {
      return false;
    }
    return isRoot() || other.path.equals(path) || other.path.startsWith(path + "/");
  }

  /**
   * Returns why this path may not name the entries a call would create here (create, mkdirs, a
   * rename's destination), or empty: a name with ':' or a control character, which the service
   * refuses too ({@link PathRule#newNameProblem}).
   */
  public java.util.Optional<String> newNameProblem() {
    return PathRule.newNameProblem(path);
  }

  /** Returns the {@code strata://} form of the path. */
  @Override
  public String toString() {
    return SCHEME + "://" + namespace + path;
  }
}
