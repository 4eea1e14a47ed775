package io.strata.core.block;

import io.strata.core.StrataPath;

/**
 * The file a {@link BlockWriter} writes, as the namespace service described it at create.
 *
 * @param path the file
 * @param storeUri the namespace's bucket, where the blocks go
 * @param inodeId the inode created for the file; block object names derive from it
 * @param blockSize the file's block size
 * @param inlineLimit the size up to which content is stored inline instead (for messages)
 * @param objectKey in a cache-mode namespace, the one object the content goes to (the worker
 *     writes it whole instead of cutting blocks); "" in block mode
 * @param token the file's block access token (write), which the workers check; renewed by each
 *     flush's answer
 */
public record WriteTarget(StrataPath path, String storeUri, long inodeId, long blockSize,
    int inlineLimit, String objectKey, BlockToken token) {
  /** A target without a token (the workers refuse to write it). */
  public WriteTarget(StrataPath path, String storeUri, long inodeId, long blockSize,
      int inlineLimit, String objectKey) {
    this(path, storeUri, inodeId, blockSize, inlineLimit, objectKey, BlockToken.none());
  }
}
