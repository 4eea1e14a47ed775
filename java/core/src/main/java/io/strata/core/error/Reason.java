package io.strata.core.error;

import java.util.Locale;
import java.util.Optional;

/**
 * The conditions the namespace service reports, named by the {@code reason} of the
 * {@code google.rpc.ErrorInfo} detail (domain {@value #DOMAIN}) of its gRPC statuses. The
 * table is docs/errors.md; the Go side is internal/fserr.
 */
public enum Reason {
  NOT_FOUND,
  ALREADY_EXISTS,
  PERMISSION_DENIED,
  NOT_DIRECTORY,
  IS_DIRECTORY,
  PARENT_NOT_DIRECTORY,
  DIRECTORY_NOT_EMPTY,
  INVALID_PATH,
  INVALID_ARGUMENT,
  LEASE_CONFLICT,
  NO_LEASE,
  RENAME_LOOP,
  ROOT_DIRECTORY,
  NO_NAMESPACE,
  UNSUPPORTED,
  CHANGED,
  /**
   * A temporary condition: no live workers, a bucket that is unavailable, a service that could
   * not finish in time. The message holds the cause; the operation may be tried again later.
   * Reported as {@link UnavailableException}, a {@link ServiceUnavailableException}.
   */
  UNAVAILABLE,
  /**
   * The call carried no token the service accepts: none, or a forged, expired or revoked one
   * (docs/security.md).
   */
  UNAUTHENTICATED,
  /**
   * The member asked is not the leader of the service's Raft group; the ErrorInfo metadata key
   * {@value #LEADER_KEY} names the leader's host:port when the member knows it. Not a file
   * system answer: the client follows it ({@link io.strata.core.rpc.MetaCaller}), and reports it
   * only when no leader was found in time ({@link NotLeaderException}).
   */
  NOT_LEADER,
  /**
   * A create, mkdir, rename or append would put more names under a directory than its name quota
   * allows. Reported as HDFS's NSQuotaExceededException by the Hadoop client.
   */
  NS_QUOTA_EXCEEDED,
  /**
   * A write would put more bytes under a directory than its space quota allows. Reported as
   * HDFS's DSQuotaExceededException by the Hadoop client.
   */
  DS_QUOTA_EXCEEDED,
  /** The file has no extended attribute of that name. */
  NO_XATTR,
  /** An ACL, or a change to one, that HDFS's rules refuse. Reported as {@link AclException}. */
  INVALID_ACL;

  /** The ErrorInfo domain of Strata's statuses. */
  public static final String DOMAIN = "strata.io";

  /** The ErrorInfo metadata key of a {@link #NOT_LEADER} status that names the leader. */
  public static final String LEADER_KEY = "leader";

  /**
   * Returns the reason named {@code name}, or empty for a reason this client does not know (a
   * newer server): such a status is reported as a plain IOException.
   */
  public static Optional<Reason> parse(String name) {
    try {
      return Optional.of(valueOf(name.toUpperCase(Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
