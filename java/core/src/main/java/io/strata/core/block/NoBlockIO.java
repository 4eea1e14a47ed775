package io.strata.core.block;

import io.strata.core.error.DataPathUnavailableException;
import io.strata.core.error.Op;

/**
 * The data path of a client built before the workers: files up to the inline limit work, larger
 * ones fail with a {@link DataPathUnavailableException} that names the limit.
 */
public final class NoBlockIO implements BlockIO {
  /** The one instance. */
  public static final NoBlockIO INSTANCE = new NoBlockIO();

  private NoBlockIO() {}

  @Override
  public BlockWriter openWriter(WriteTarget t) throws DataPathUnavailableException {
    throw new DataPathUnavailableException(Op.WRITE, t.path().toString(), "write " + t.path() + ": files over "
        + t.inlineLimit() + " bytes (the inline limit) need the Strata data path (workers), "
        + "which this client does not have yet");
  }

  @Override
  public BlockReader openReader(ReadTarget t) throws DataPathUnavailableException {
    throw new DataPathUnavailableException(Op.OPEN, t.path().toString(), "open " + t.path() + ": the file ("
        + t.length() + " bytes) is stored in blocks, which need the Strata data path "
        + "(workers) that this client does not have yet");
  }
}
