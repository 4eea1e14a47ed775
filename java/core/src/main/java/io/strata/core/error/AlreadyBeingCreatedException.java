package io.strata.core.error;

/**
 * LEASE_CONFLICT: another client is writing the file. Named after HDFS's exception, whose simple
 * name some tools match on.
 */
public class AlreadyBeingCreatedException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public AlreadyBeingCreatedException(Op op, String path, String message,
      Throwable cause) {
    super(Reason.LEASE_CONFLICT, op, path, message, cause);
  }
}
