package io.strata.hadoop;

import io.strata.core.Namespace;
import org.apache.hadoop.fs.CommonPathCapabilities;

/**
 * What {@link StrataFileSystem#hasPathCapability} answers, by the namespace's mode. A block-mode
 * namespace has HDFS's semantics (permissions, leases, atomic renames). A cache-mode namespace
 * is a view of a bucket with S3A's semantics, and answers as S3A (Hadoop 3.4.2's
 * S3AFileSystem.hasPathCapability) does where the two agree: directory markers are understood
 * and kept, permissions are not the bucket's, renames copy then delete. Anything not named here
 * is false, or Hadoop's own answer (bulk delete). docs/java.md, "Capabilities", has the table.
 */
final class Capabilities {
  /**
   * Renames of files and directories are atomic. Strata's own name (Hadoop 3.4.2 has no common
   * constant for it): true in block mode, false in cache mode (docs/cachemode.md).
   */
  static final String ATOMIC_RENAME = "fs.capability.paths.atomic.rename";

  /** S3A's directory-marker capabilities (org.apache.hadoop.fs.s3a.Constants). */
  static final String MARKER_AWARE = "fs.s3a.capability.directory.marker.aware";
  static final String MARKER_POLICY_KEEP = "fs.s3a.capability.directory.marker.policy.keep";
  static final String MARKER_POLICY_DELETE = "fs.s3a.capability.directory.marker.policy.delete";
  static final String MARKER_POLICY_AUTHORITATIVE =
      "fs.s3a.capability.directory.marker.policy.authoritative";
  static final String MARKER_ACTION_KEEP = "fs.s3a.capability.directory.marker.action.keep";
  static final String MARKER_ACTION_DELETE = "fs.s3a.capability.directory.marker.action.delete";

  private Capabilities() {}

  /**
   * The answer for {@code capability} (validated, lower case) in namespace {@code ns}; empty
   * where Hadoop's default answer stands.
   */
  static java.util.Optional<Boolean> of(Namespace ns, String capability) {
    boolean cache = ns.cacheMode();
    switch (capability) {
      case CommonPathCapabilities.FS_PERMISSIONS:
        // A bucket keeps no permissions: chmod changes what Strata shows until it reloads.
        return java.util.Optional.of(!cache);
      case ATOMIC_RENAME:
      case CommonPathCapabilities.FS_APPEND:
      case CommonPathCapabilities.FS_TRUNCATE:
        // A cache-mode namespace's files are objects: no append, no truncate.
        return java.util.Optional.of(!cache);
      case CommonPathCapabilities.FS_CONCAT:
        // Block mode moves blocks; a cache-mode namespace's files are objects.
        return java.util.Optional.of(!cache);
      case CommonPathCapabilities.FS_CHECKSUMS:
        // getFileChecksum, COMPOSITE-CRC32C, in both modes.
        return java.util.Optional.of(true);
      case CommonPathCapabilities.LEASE_RECOVERABLE:
        // Writers hold leases in both modes; in cache mode recovery ends the upload.
        return java.util.Optional.of(true);
      case MARKER_AWARE:
      case MARKER_POLICY_KEEP:
      case MARKER_ACTION_KEEP:
        // mkdir puts a marker and a file below it leaves it, as S3A's default "keep" policy.
        return java.util.Optional.of(cache);
      case CommonPathCapabilities.BULK_DELETE:
        return java.util.Optional.empty();
      default:
        return java.util.Optional.of(false);
    }
  }
}
