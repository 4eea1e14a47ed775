package io.strata.core.error;

/**
 * CHANGED: in a cache-mode namespace, the object behind an open file changed in the bucket (another
 * version, or deleted) after the file was opened, and the worker would not mix two versions; as
 * S3A's {@code RemoteFileChangedException}. A reader that has returned nothing yet opens the file
 * again by itself ({@link io.strata.core.FileReader}); one that has must be opened again by its
 * caller.
 */
public class ObjectChangedException extends StrataException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for {@code op} on {@code path}; {@code detail} is what the worker said
   * (it names the object's key and the version the reader had).
   */
  public ObjectChangedException(Op op, String path, String detail, Throwable cause) {
    super(Reason.CHANGED, op, path, op.name().toLowerCase(java.util.Locale.ROOT) + " " + path
        + ": the file changed in the bucket since it was opened; open it again (" + detail + ")",
        cause);
  }
}
