package io.strata.core;

/**
 * The arguments of {@link StrataClient#create}.
 *
 * @param permission mode bits before the client's umask is applied
 * @param overwrite replace an existing file
 * @param createParents create missing parent directories (false: createNonRecursive)
 * @param replication replication to record, 0 for the service's default
 * @param blockSize block size to record, 0 for the service's default
 */
public record CreateOptions(int permission, boolean overwrite, boolean createParents,
    int replication, long blockSize) {

  /** Mode 0666, no overwrite, parents created, the service's defaults. */
  public static CreateOptions defaults() {
    return new CreateOptions(0666, false, true, 0, 0);
  }

  /** Returns a copy with {@code overwrite} set. */
  public CreateOptions withOverwrite(boolean o) {
    return new CreateOptions(permission, o, createParents, replication, blockSize);
  }
}
