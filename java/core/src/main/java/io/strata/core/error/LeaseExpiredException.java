package io.strata.core.error;

/**
 * NO_LEASE: the writer's lease expired or the file was recovered or replaced meanwhile. Named
 * after HDFS's exception.
 */
public class LeaseExpiredException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public LeaseExpiredException(Op op, String path, String message,
      Throwable cause) {
    super(Reason.NO_LEASE, op, path, message, cause);
  }
}
