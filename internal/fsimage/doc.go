// Package fsimage reads the namespace of an HDFS NameNode from its image
// (fsimage), in either of the forms an operator can take out of a cluster:
// the binary image itself (Open), or the text that `hdfs oiv -p Delimited`
// writes of it (OpenDelimited). It reads; it builds nothing, and knows
// nothing of Strata's state.
//
// # The binary image
//
// Hadoop's fsimage.proto (FSImageFormatProtobuf) lays an image out as
//
//	"HDFSIMG1" section... FileSummary(length-delimited) length(4, big-endian)
//
// The FileSummary at the end indexes the sections by name, offset and
// length, and names the codec that compresses every section (none by
// default). Each section is a run of length-delimited protobuf messages:
//
//	INODE         INodeSection (lastInodeId, numInodes), then numInodes INodes
//	INODE_DIR     DirEntry until the section ends: a directory's children,
//	              by inode id, and by index into INODE_REFERENCE
//	INODE_REFERENCE  INodeReference until the section ends (a renamed
//	              inode that a snapshot still sees under its old name)
//	STRING_TABLE  StringTableSection (numEntry, maskBits), then the entries
//
// An inode's permission is a 64-bit word: the user's string id in bits
// 40-63, the group's in 16-39, the mode in 0-15. With maskBits (Hadoop
// 3.2 and later), the string table's ids carry the kind of string in their
// top bits (user 1, group 2), and an inode's ids are looked up with them.
//
// The reader checks what it reads: lengths within their section, fields of
// the wire types the schema gives, strings the table has, names that can
// name a file. A failure is a *FormatError naming the section and the
// offset (in the file; in a compressed section, in its decompressed bytes).
// A flipped byte inside a value (a name, a time) parses; HDFS writes the
// image's MD5 beside it (fsimage_N.md5), which CheckDigest compares.
//
// The image holds inodes that only snapshots see (deleted since, or older
// versions); they are in the INODE section but no directory's child, and
// the caller, walking from the root, never meets them.
//
// # The text form
//
// `hdfs oiv -p Delimited` writes a header line, then one line per inode:
// its path and, tab-separated, replication, modification and access times
// (to the minute, in the time zone of the machine it ran on), preferred
// block size, block count, size, namespace and space quotas, permission
// ("drwxr-xr-x", "+" after it for an ACL), user and group. Links show as
// files of replication 0 and block size 0. Its ids are the line numbers.
package fsimage
