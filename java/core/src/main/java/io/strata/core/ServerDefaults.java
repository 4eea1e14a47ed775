package io.strata.core;

/**
 * What the service gives a file whose creator leaves a setting unset: the one place these
 * defaults are chosen (HDFS's server defaults).
 *
 * @param blockSize the block size of a file created without one
 * @param replication the replication of a file created without one
 * @param inlineLimit files up to this many bytes are stored inline in their inode
 * @param trashIntervalMs how long {@code fs -rm} keeps what it deletes in the user's trash; 0:
 *     the trash is off
 */
public record ServerDefaults(long blockSize, int replication, int inlineLimit,
    long trashIntervalMs) {}
