package io.strata.hadoop;

import java.io.IOException;

/**
 * An ACL, or a change to one, that HDFS's rules refuse. Named and worded as HDFS's
 * (org.apache.hadoop.hdfs.protocol.AclException, which this client cannot depend on).
 */
public class AclException extends IOException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with HDFS's message. */
  public AclException(String message) {
    super(message);
  }
}
