package io.strata.core.block;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;

/**
 * The data path: moving the content of files larger than the inline limit in and out of blocks
 * (through the workers). The namespace client calls it only for such files; small files never
 * reach it. Implementations must be safe for concurrent use by many open files.
 *
 * <p>The client's own implementation is {@link io.strata.core.worker.WorkerBlockIO}; another one
 * can be set with {@link io.strata.core.ClientConfig.Builder#blockIO} (tests use that to inject
 * failures).
 */
public interface BlockIO extends Closeable {
  /**
   * Starts writing content of {@code target}, whose content outgrew the inline limit: in block
   * mode one block (the caller opens one writer per block, and sends at most the block size to
   * each), in cache mode the whole object ({@link WriteTarget#objectKey}).
   */
  BlockWriter openWriter(WriteTarget target) throws IOException;

  /** Opens {@code target}'s blocks for reading. */
  BlockReader openReader(ReadTarget target) throws IOException;

  /**
   * Returns where each block of {@code target} is best read: its home worker. Empty when the
   * implementation has no notion of place.
   */
  default List<BlockLocation> locate(ReadTarget target) throws IOException {
    return List.of();
  }

  /**
   * Returns the CRC32C of each whole block of {@code target}, in order, for a file's checksum
   * ({@link io.strata.core.FileChecksum}). The workers combine the CRCs their caches keep of
   * each block's chunks, reading no byte of a cached block; this default reads every block
   * through {@link #openReader} instead.
   */
  default int[] blockCrcs(ReadTarget target) throws IOException {
    int[] out = new int[target.blocks().size()];
    byte[] buf = new byte[1 << 20];
    try (BlockReader r = openReader(target)) {
      for (int i = 0; i < out.length; i++) {
        BlockExtent e = target.blocks().get(i);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        for (long done = 0; done < e.length(); ) {
          int n = r.read(e.offset() + done, buf, 0, (int) Math.min(buf.length, e.length() - done));
          if (n < 0) {
            throw new java.io.EOFException("checksum " + target.path() + ": block "
                + Long.toHexString(e.blockId()) + " ends at " + done + " of " + e.length());
          }
          crc.update(buf, 0, n);
          done += n;
        }
        out[i] = (int) crc.getValue();
      }
    }
    return out;
  }

  /** Releases connections; the default has none. */
  @Override
  default void close() throws IOException {}
}
