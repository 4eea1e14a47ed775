package io.strata.core.error;

/**
 * The operation needs the block data path and there is none: no worker is alive, so a file
 * larger than the inline limit can be neither written nor read. An IOException, so that a failed
 * write surfaces where stream errors do; its reason is UNSUPPORTED (as the Go client's).
 */
public class DataPathUnavailableException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public DataPathUnavailableException(Op op, String path, String message) {
    super(Reason.UNSUPPORTED, op, path, message, null);
  }
}
