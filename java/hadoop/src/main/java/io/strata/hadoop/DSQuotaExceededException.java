package io.strata.hadoop;

import org.apache.hadoop.fs.ClusterStorageCapacityExceededException;

/**
 * A write would take a directory past its space quota. Named and
 * worded as HDFS's (org.apache.hadoop.hdfs.protocol.DSQuotaExceededException, which this client
 * cannot depend on): tools match the simple name; both extend Hadoop's
 * ClusterStorageCapacityExceededException, which tools catch to stop retrying.
 */
public class DSQuotaExceededException extends ClusterStorageCapacityExceededException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with HDFS's message. */
  public DSQuotaExceededException(String message) {
    super(message);
  }
}
