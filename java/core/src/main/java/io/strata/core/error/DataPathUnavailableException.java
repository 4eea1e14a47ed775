package io.strata.core.error;

/**
 * The operation needs the block data path and there is none: no worker is alive (after waiting
 * for one, see {@code WorkerSet}), so a file larger than the inline limit can be neither written
 * nor read. Temporary, as the Go client's: reason {@link Reason#UNAVAILABLE}, an {@link
 * UnavailableException} (a {@link ServiceUnavailableException}), never an
 * UnsupportedOperationException.
 */
public class DataPathUnavailableException extends UnavailableException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public DataPathUnavailableException(Op op, String path, String message) {
    super(op, path, message, null);
  }
}
