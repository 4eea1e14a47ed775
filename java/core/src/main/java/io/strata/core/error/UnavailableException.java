package io.strata.core.error;

/**
 * A temporary condition a Strata service reported (reason {@link Reason#UNAVAILABLE}): no live
 * workers, a bucket that is unavailable. A {@link ServiceUnavailableException}, as a service that
 * cannot be reached is, so that callers treat both alike: the operation may be tried again later.
 * The message holds the cause.
 */
public class UnavailableException extends ServiceUnavailableException implements StrataError {
  private static final long serialVersionUID = 1L;

  private final Op op;
  private final String path;

  /** Creates the exception for {@code op} on {@code path}. */
  public UnavailableException(Op op, String path, String message, Throwable cause) {
    super(message, cause);
    this.op = op;
    this.path = path;
  }

  @Override
  public Reason reason() {
    return Reason.UNAVAILABLE;
  }

  @Override
  public Op op() {
    return op;
  }

  @Override
  public String path() {
    return path;
  }
}
