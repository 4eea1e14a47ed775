package io.strata.core.error;

import java.io.IOException;

/**
 * The namespace service or a worker could not be reached (gRPC UNAVAILABLE): a transport
 * failure, not a file system answer. The operation may or may not have been applied.
 */
public class ServiceUnavailableException extends IOException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception. */
  public ServiceUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
