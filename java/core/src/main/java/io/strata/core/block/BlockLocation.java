package io.strata.core.block;

/**
 * Where one block of a file is best read: the home worker that rendezvous placement gives it
 * (docs/datapath.md, "Reading"). The home caches the block, so a task scheduled on its host reads
 * it short-circuit.
 *
 * @param offset where the block starts in the file
 * @param length bytes in the block
 * @param workerId the home worker's id
 * @param address the home worker's gRPC address, host:port
 * @param host the home worker's host name
 */
public record BlockLocation(long offset, long length, String workerId, String address,
    String host) {}
