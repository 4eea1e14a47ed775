package io.strata.core.block;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Writes content into blocks: in a block-mode namespace one block of a file (the file's writer
 * opens one per block, so that it learns of each block as soon as it is finished, and a flush can
 * commit it), in a cache-mode one the file's whole object. Not safe for concurrent use, except
 * {@link #abort}. The caller commits the returned blocks with the namespace service (Flush or
 * Complete), so nothing the writer stored is visible before that commit succeeds.
 */
public interface BlockWriter {
  /** Appends {@code len} bytes of {@code b} from {@code off} to the content. */
  void write(byte[] b, int off, int len) throws IOException;

  /**
   * Makes every block durable in the bucket and returns them, contiguous from offset 0 of what
   * this writer was given. Called at most once, as is {@link #finishAsync}; no write may follow.
   */
  List<BlockExtent> finish() throws IOException;

  /**
   * Ends the content as {@link #finish} does, without waiting for the blocks to be durable: the
   * future completes with them, or with the IOException that failed the write. What must be sent
   * still may be sent before this returns. The default waits, in {@link #finish}.
   */
  default CompletableFuture<List<BlockExtent>> finishAsync() {
    try {
      return CompletableFuture.completedFuture(finish());
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Gives up: the content will not be committed. Best effort and idempotent; blocks already
   * stored become garbage for the service to collect.
   */
  void abort();

  /**
   * Waits for {@code f}, a {@link #finishAsync} result, and returns its blocks or throws the
   * IOException that failed it. An interrupted wait runs {@code onInterrupt} (which should give
   * the write up) and throws an InterruptedIOException.
   */
  static List<BlockExtent> await(CompletableFuture<List<BlockExtent>> f, Runnable onInterrupt)
      throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      onInterrupt.run();
      InterruptedIOException ie = new InterruptedIOException("interrupted waiting for a block");
      ie.initCause(e);
      throw ie;
    } catch (ExecutionException e) {
      Throwable c = e.getCause(); // a stage's CompletionException is unwrapped already
      if (c instanceof IOException) {
        throw (IOException) c;
      }
      throw new IOException("a block's write failed: " + c, c);
    }
  }
}
