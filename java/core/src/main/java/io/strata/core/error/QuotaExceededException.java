package io.strata.core.error;

/**
 * NS_QUOTA_EXCEEDED or DS_QUOTA_EXCEEDED: the operation would take a directory past its name or
 * space quota. The message is HDFS's NSQuotaExceededException's or DSQuotaExceededException's,
 * after the operation and path; {@link #detail} is HDFS's alone.
 */
public class QuotaExceededException extends StrataException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception for {@code reason}, one of the two quota reasons. */
  public QuotaExceededException(Reason reason, Op op, String path, String message,
      Throwable cause) {
    super(reason, op, path, message, cause);
  }

  /** Whether the name quota (rather than the space quota) was exceeded. */
  public boolean names() {
    return reason() == Reason.NS_QUOTA_EXCEEDED;
  }
}
