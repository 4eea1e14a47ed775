package io.strata.core;

/**
 * The aggregates of a subtree, exact and answered without a walk (docs/semantics.md).
 *
 * @param length total bytes of the files
 * @param fileCount number of files
 * @param directoryCount number of directories, including the directory itself
 * @param spaceConsumed length times replication; of a directory with quotas, what counts
 *     against its space quota (the bytes, once)
 * @param loadedOnly cache mode: the counts are of what the service has loaded from the bucket,
 *     which may be less than the bucket holds ({@code strata admin load --metadata PATH} loads a
 *     subtree whole; docs/cachemode.md)
 * @param nameQuota the directory's name quota, -1 for none
 * @param spaceQuota the directory's space quota, -1 for none
 */
public record ContentSummary(long length, long fileCount, long directoryCount,
    long spaceConsumed, boolean loadedOnly, long nameQuota, long spaceQuota) {}
