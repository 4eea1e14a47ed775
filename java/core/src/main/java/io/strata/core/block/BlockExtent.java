package io.strata.core.block;

/**
 * One immutable block of a file: the range [offset, offset+length) of its content.
 *
 * @param blockId the block's id, unique within the file's inode
 * @param offset where the block starts in the file
 * @param length bytes in the block
 */
public record BlockExtent(long blockId, long offset, long length) {}
