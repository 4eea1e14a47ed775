package io.strata.hadoop;

import io.strata.core.error.Op;
import io.strata.core.error.ServiceUnavailableException;
import io.strata.core.error.StrataError;
import io.strata.core.error.StrataException;
import java.io.FileNotFoundException;
import java.io.IOException;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.InvalidPathException;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.PathIsNotEmptyDirectoryException;
import org.apache.hadoop.security.AccessControlException;

/**
 * The one mapping from the core's {@link StrataError}s to Hadoop's exceptions, by reason, as
 * docs/errors.md tabulates it. The Hadoop exception keeps the service's message and has the core
 * exception as its cause. Exceptions that are not Strata answers pass through unchanged.
 */
final class HadoopErrors {
  private HadoopErrors() {}

  /**
   * Returns the Hadoop exception for {@code e}; use as {@code throw HadoopErrors.translate(e)}.
   * Reasons Hadoop reports with unchecked exceptions (invalid path or argument, unsupported
   * operation) are thrown from here.
   */
  static IOException translate(IOException e) {
    if (!(e instanceof StrataError) || e instanceof ServiceUnavailableException) {
      // Temporary conditions (NOT_LEADER past the retries, UNAVAILABLE: no live workers, the
      // bucket unavailable) stay ServiceUnavailableExceptions, IOExceptions with their cause.
      return e;
    }
    StrataError se = (StrataError) e;
    String m = e.getMessage();
    switch (se.reason()) {
      case ALREADY_EXISTS:
        return withCause(new FileAlreadyExistsException(m), e);
      case PERMISSION_DENIED:
      case UNAUTHENTICATED:
        return withCause(new AccessControlException(m), e);
      case PARENT_NOT_DIRECTORY:
        return withCause(new ParentNotDirectoryException(m), e);
      case DIRECTORY_NOT_EMPTY:
        return withCause(new PathIsNotEmptyDirectoryException(se.path()), e);
      case IS_DIRECTORY:
        return isDirectory(se.op(), m, e);
      case INVALID_PATH:
        InvalidPathException ip = new InvalidPathException(se.path(), m);
        ip.initCause(e);
        throw ip;
      case INVALID_ARGUMENT:
        // HDFS's client refuses a bad attribute name, ACL spec or quota itself, in its words.
        throw new IllegalArgumentException(isFeature(se.op()) ? detail(e) : m, e);
      case UNSUPPORTED:
        throw new UnsupportedOperationException(m, e);
      case NS_QUOTA_EXCEEDED:
        return withCause(new NSQuotaExceededException(detail(e)), e);
      case DS_QUOTA_EXCEEDED:
        return withCause(new DSQuotaExceededException(detail(e)), e);
      case INVALID_ACL:
        return withCause(new AclException(detail(e)), e);
      case NO_XATTR:
        return withCause(new IOException(detail(e)), e);
      default:
        // NOT_FOUND and NO_NAMESPACE are FileNotFoundExceptions already; LEASE_CONFLICT and
        // NO_LEASE carry HDFS's class names; NOT_DIRECTORY (rename2 of a directory over a
        // file), RENAME_LOOP and ROOT_DIRECTORY are plain IOExceptions in HDFS too.
        return e;
    }
  }

  /**
   * HDFS: "is a directory" means "file exists" to create, "not found" to open, append and
   * truncate (which want a file).
   */
  private static IOException isDirectory(Op op, String m, IOException cause) {
    switch (op) {
      case CREATE:
        return withCause(new FileAlreadyExistsException(m), cause);
      case OPEN:
      case APPEND:
      case TRUNCATE:
        return withCause(new FileNotFoundException(m), cause);
      default:
        return cause;
    }
  }

  private static boolean isFeature(Op op) {
    return switch (op) {
      case SET_QUOTA, SET_XATTR, GET_XATTRS, REMOVE_XATTR, MODIFY_ACL, GET_ACL_STATUS,
          SET_STORAGE_POLICY, GET_STORAGE_POLICY -> true;
      default -> false;
    };
  }

  /** HDFS's words alone: the service's message without the operation and path it starts with. */
  private static String detail(IOException e) {
    return e instanceof StrataException se ? se.detail() : e.getMessage();
  }

  private static IOException withCause(IOException e, Throwable cause) {
    e.initCause(cause);
    return e;
  }
}
