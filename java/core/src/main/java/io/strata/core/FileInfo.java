package io.strata.core;

import io.strata.proto.v1.FileStatus;
import io.strata.proto.v1.FileType;

/**
 * The attributes of a file or directory, as the namespace service reports them.
 *
 * @param path where the entry is
 * @param directory whether it is a directory
 * @param length file length in bytes (0 for a directory); for a file being written, its visible
 *     length: what was committed by its writer's last flush
 * @param permission mode bits, 0o7777
 * @param owner owning user
 * @param group owning group
 * @param modificationTime milliseconds since the epoch
 * @param accessTime milliseconds since the epoch
 * @param replication the replication recorded at create (0 for a directory)
 * @param blockSize the block size recorded at create (0 for a directory)
 * @param underConstruction the file is open for writing
 * @param children number of entries directly inside a directory
 * @param inodeId the service's inode id
 */
public record FileInfo(
    StrataPath path,
    boolean directory,
    long length,
    int permission,
    String owner,
    String group,
    long modificationTime,
    long accessTime,
    int replication,
    long blockSize,
    boolean underConstruction,
    long children,
    long inodeId,
    boolean hasAcl) {

  /**
   * Converts the wire status of the entry at {@code path}. NB: the wire status names only the
   * last component, so the caller supplies the full path.
   */
  static FileInfo of(StrataPath path, FileStatus st) {
    return new FileInfo(path, st.getType() == FileType.FILE_TYPE_DIRECTORY, st.getLength(),
        st.getPermission(), st.getOwner(), st.getGroup(), st.getModificationTime(),
        st.getAccessTime(), st.getReplication(), st.getBlockSize(), st.getUnderConstruction(),
        st.getChildren(), st.getInodeId(), st.getHasAcl());
  }
}
