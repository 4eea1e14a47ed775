package io.strata.core.block;

import java.io.IOException;

/**
 * The data path: moving the content of files larger than the inline limit in and out of blocks
 * (through the workers). The namespace client calls it only for such files; small files never
 * reach it. Implementations must be safe for concurrent use by many open files.
 *
 * <p>Until the workers land, {@link NoBlockIO} is the only implementation: it refuses both
 * directions with a {@link io.strata.core.error.DataPathUnavailableException}.
 */
public interface BlockIO {
  /** Starts writing the blocks of {@code target}, whose content outgrew the inline limit. */
  BlockWriter openWriter(WriteTarget target) throws IOException;

  /** Opens {@code target}'s blocks for reading. */
  BlockReader openReader(ReadTarget target) throws IOException;
}
