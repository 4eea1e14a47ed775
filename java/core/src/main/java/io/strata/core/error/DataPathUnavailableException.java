package io.strata.core.error;

/**
 * The operation needs the block data path (workers), which this client does not have yet: a file
 * larger than the inline limit cannot be written or read. An IOException, so that a failed write
 * surfaces where stream errors do; its reason is UNSUPPORTED.
 */
public class DataPathUnavailableException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public DataPathUnavailableException(Op op, String path, String message) {
    super(Reason.UNSUPPORTED, op, path, message, null);
  }
}
