package io.strata.core.block;

/**
 * One immutable block of a file: the range [offset, offset+length) of its content.
 *
 * @param blockId the block's id, unique within the inode its object is under
 * @param offset where the block starts in the file
 * @param length bytes in the block
 * @param objectInode the inode whose prefix the block's object is under when not the file's own
 *     (a block a concat moved), else 0
 */
public record BlockExtent(long blockId, long offset, long length, long objectInode) {
  /** A block of the file's own. */
  public BlockExtent(long blockId, long offset, long length) {
    this(blockId, offset, length, 0);
  }

  /** The inode the block's object is named by, for a file of inode {@code file}. */
  public long owner(long file) {
    return objectInode != 0 ? objectInode : file;
  }
}
