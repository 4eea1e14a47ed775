package io.strata.core;

/**
 * The aggregates of a subtree, exact and answered without a walk (docs/semantics.md).
 *
 * @param length total bytes of the files
 * @param fileCount number of files
 * @param directoryCount number of directories, including the directory itself
 * @param spaceConsumed length times replication
 */
public record ContentSummary(long length, long fileCount, long directoryCount,
    long spaceConsumed) {}
