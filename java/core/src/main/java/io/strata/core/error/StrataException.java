package io.strata.core.error;

import java.io.IOException;

/**
 * A condition reported by the namespace service. The message is the service's and already names
 * the operation and the path. Not-found conditions use {@link StrataFileNotFoundException}
 * instead, so that callers catching {@link java.io.FileNotFoundException} see them.
 */
public class StrataException extends IOException implements StrataError {
  private static final long serialVersionUID = 1L;

  private final Reason reason;
  private final Op op;
  private final String path;

  /** Creates an exception for {@code reason} met by {@code op}. */
  public StrataException(Reason reason, Op op, String path, String message,
      Throwable cause) {
    super(message, cause);
    this.reason = reason;
    this.op = op;
    this.path = path;
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

  /**
   * The service's reason without the operation and path its message starts with ("op path:
   * reason"), as HDFS's exceptions word it; the whole message if it has no such start.
   */
  public String detail() {
    String m = getMessage();
    int i = m == null ? -1 : m.indexOf(": ");
    return i < 0 ? m : m.substring(i + 2);
  }
}
