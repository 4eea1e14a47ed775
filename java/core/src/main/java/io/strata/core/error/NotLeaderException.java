package io.strata.core.error;

/**
 * No leader of the namespace service's Raft group could be found before the call's retry
 * deadline: the last member asked answered NOT_LEADER (an election was under way, or the member
 * is cut off from the others). A transport failure, not a file system answer: the operation may
 * or may not have been applied.
 */
public class NotLeaderException extends ServiceUnavailableException implements StrataError {
  private static final long serialVersionUID = 1L;

  private final Op op;
  private final String path;

  /** Creates the exception for {@code op} on {@code path}. */
  public NotLeaderException(Op op, String path, String message, Throwable cause) {
    super(message, cause);
    this.op = op;
    this.path = path;
  }

  @Override
  public Reason reason() {
    return Reason.NOT_LEADER;
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
