package io.strata.core.error;

/**
 * A file system answer from the namespace service (or the client's own equivalent of one): the
 * condition and the operation that met it. Implemented by {@link StrataException} and {@link
 * StrataFileNotFoundException}, which differ only in their Java base class.
 */
public interface StrataError {
  /** The condition. */
  Reason reason();

  /** The operation that failed. */
  Op op();

  /** The path the operation was on ({@code strata://} form), for messages. */
  String path();
}
