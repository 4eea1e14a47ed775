package io.strata.core.block;

import io.strata.core.StrataPath;
import java.util.List;

/**
 * The file a {@link BlockReader} reads, as the namespace service described it at open.
 *
 * @param path the file
 * @param storeUri the namespace's bucket, where the blocks live
 * @param inodeId the file's inode
 * @param length the committed length of the file
 * @param blocks the blocks, contiguous from offset 0, in order
 * @param objectKey in a cache-mode namespace, the object whose ranges the blocks are; "" in
 *     block mode, where each block is an object of its own
 * @param objectVersion the version (ETag) of that object the blocks are ranges of
 * @param token the file's block access token, which the workers check
 * @param objectTokens the tokens of the other inodes whose prefixes hold objects of its blocks
 *     ({@link BlockExtent#objectInode}), by inode
 */
public record ReadTarget(StrataPath path, String storeUri, long inodeId, long length,
    List<BlockExtent> blocks, String objectKey, String objectVersion, BlockToken token,
    java.util.Map<Long, BlockToken> objectTokens) {
  /** Copies the block list and the tokens. */
  public ReadTarget {
    blocks = List.copyOf(blocks);
    objectTokens = java.util.Map.copyOf(objectTokens);
  }

  /** A target whose blocks are all the file's own. */
  public ReadTarget(StrataPath path, String storeUri, long inodeId, long length,
      List<BlockExtent> blocks, String objectKey, String objectVersion, BlockToken token) {
    this(path, storeUri, inodeId, length, blocks, objectKey, objectVersion, token,
        java.util.Map.of());
  }

  /** The token that lets a worker read block {@code e}'s object. */
  public BlockToken tokenOf(BlockExtent e) {
    BlockToken t = e.objectInode() == 0 ? null : objectTokens.get(e.objectInode());
    return t != null ? t : token;
  }

  /** A target without a token (the workers refuse to read it). */
  public ReadTarget(StrataPath path, String storeUri, long inodeId, long length,
      List<BlockExtent> blocks, String objectKey, String objectVersion) {
    this(path, storeUri, inodeId, length, blocks, objectKey, objectVersion, BlockToken.none());
  }
}
