package io.strata.core.error;

import java.io.FileNotFoundException;

/** NOT_FOUND or NO_NAMESPACE: nothing at the path, or no such namespace. */
public class StrataFileNotFoundException extends FileNotFoundException implements StrataError {
  private static final long serialVersionUID = 1L;

  private final Reason reason;
  private final Op op;
  private final String path;

  /** Creates an exception for {@code reason} met by {@code op}. */
  public StrataFileNotFoundException(Reason reason, Op op, String path, String message,
      Throwable cause) {
    super(message);
    this.reason = reason;
    this.op = op;
    this.path = path;
    initCause(cause);
  }

  @Override
  public Reason reason() {
    return reason;
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
