package io.strata.hadoop;

import org.apache.hadoop.fs.ClusterStorageCapacityExceededException;

/**
 * A create, mkdir, rename or append would take a directory past its name quota. Named and
 * worded as HDFS's (org.apache.hadoop.hdfs.protocol.NSQuotaExceededException, which this client
 * cannot depend on): tools match the simple name; both extend Hadoop's
 * ClusterStorageCapacityExceededException, which tools catch to stop retrying.
 */
public class NSQuotaExceededException extends ClusterStorageCapacityExceededException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with HDFS's message. */
  public NSQuotaExceededException(String message) {
    super(message);
  }
}
