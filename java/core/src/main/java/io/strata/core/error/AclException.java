package io.strata.core.error;

/**
 * INVALID_ACL: an ACL, or a change to one, that HDFS's rules refuse. Named after HDFS's
 * exception, whose simple name some tools match on.
 */
public class AclException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public AclException(Op op, String path, String message, Throwable cause) {
    super(Reason.INVALID_ACL, op, path, message, cause);
  }
}
