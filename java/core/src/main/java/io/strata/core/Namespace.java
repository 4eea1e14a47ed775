package io.strata.core;

import io.strata.proto.v1.NamespaceInfo;
import io.strata.proto.v1.NamespaceMode;

/**
 * What a namespace is, as the service's ListNamespaces describes it: how it keeps its files (its
 * mode) and, in cache mode, how long what it loaded from its bucket is trusted.
 *
 * @param name the namespace's name
 * @param mode block mode (Strata owns the namespace) or cache mode (a view of a bucket)
 * @param storeUri the namespace's bucket: {@code file:///dir} or {@code s3://bucket/prefix}
 * @param syncIntervalSeconds cache mode: seconds what was loaded from the bucket is trusted; -1
 *     for ever, 0 not at all (docs/cachemode.md); 0 in block mode
 */
public record Namespace(String name, Mode mode, String storeUri, long syncIntervalSeconds) {
  /** How a namespace keeps its files. */
  public enum Mode {
    /** Strata owns the namespace; file data is in blocks of its own (HDFS semantics). */
    BLOCK,
    /**
     * A view of an existing bucket: every object is a file at its key, with object-store rules
     * (rename copies then deletes, not atomically), as S3A sees the bucket.
     */
    CACHE
  }

  /** Whether the namespace is a cache-mode view of a bucket. */
  public boolean cacheMode() {
    return mode == Mode.CACHE;
  }

  /** Converts the service's description. A mode this client does not know is taken as block. */
  static Namespace of(NamespaceInfo info) {
    Mode m = info.getMode() == NamespaceMode.NAMESPACE_MODE_CACHE ? Mode.CACHE : Mode.BLOCK;
    return new Namespace(info.getName(), m, info.getStoreUri(), info.getSyncInterval());
  }
}
