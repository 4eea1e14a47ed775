package io.strata.core;

/**
 * The aggregates of a subtree, exact and answered without a walk (docs/semantics.md).
 *
 * @param length total bytes of the files
 * @param fileCount number of files
 * @param directoryCount number of directories, including the directory itself
 * @param spaceConsumed length times replication
 * @param loadedOnly cache mode: the counts are of what the service has loaded from the bucket,
 *     which may be less than the bucket holds ({@code strata admin load --metadata PATH} loads a
 *     subtree whole; docs/cachemode.md)
 * @param quota a directory's quota on the entries below it (itself counted), as HDFS sets one
 *     (a namespace imported from HDFS keeps them; Strata does not enforce them yet), -1 when not set
 * @param spaceQuota its quota on bytes times replication, -1 when not set
 */
public record ContentSummary(long length, long fileCount, long directoryCount,
    long spaceConsumed, boolean loadedOnly, long quota, long spaceQuota) {}
