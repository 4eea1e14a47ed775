package io.strata.core.error;

/**
 * The client operation that met an error. Adapters need it where one reason maps to different
 * exceptions depending on the operation (IS_DIRECTORY is "file exists" for create but "not
 * found" for open, as in HDFS).
 */
public enum Op {
  MKDIRS,
  CREATE,
  WRITE,
  COMPLETE,
  FLUSH,
  APPEND,
  TRUNCATE,
  GET_FILE_STATUS,
  OPEN,
  READ,
  READ_TAIL,
  LIST,
  RENAME,
  DELETE,
  SET_PERMISSION,
  SET_OWNER,
  SET_TIMES,
  CONTENT_SUMMARY,
  SERVER_DEFAULTS,
  RENEW_LEASE,
  RECOVER_LEASE,
  LIST_WORKERS,
  LIST_NAMESPACES,
  ADMIN,
  SET_QUOTA,
  SET_XATTR,
  GET_XATTRS,
  REMOVE_XATTR,
  MODIFY_ACL,
  GET_ACL_STATUS,
  SET_STORAGE_POLICY,
  GET_STORAGE_POLICY
}
