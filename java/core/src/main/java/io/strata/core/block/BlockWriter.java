package io.strata.core.block;

import java.io.IOException;
import java.util.List;

/**
 * Writes one file's content into blocks. Not safe for concurrent use; one writer per open file.
 * The caller commits the returned blocks with the namespace service (Complete), so nothing the
 * writer stored is visible before {@link #finish} returns and the commit succeeds.
 */
public interface BlockWriter {
  /** Appends {@code len} bytes of {@code b} from {@code off} to the file's content. */
  void write(byte[] b, int off, int len) throws IOException;

  /**
   * Makes every block durable in the bucket and returns them, contiguous from offset 0. Called
   * at most once; no write may follow.
   */
  List<BlockExtent> finish() throws IOException;

  /**
   * Gives up: the content will not be committed. Best effort and idempotent; blocks already
   * stored become garbage for the service to collect.
   */
  void abort();
}
