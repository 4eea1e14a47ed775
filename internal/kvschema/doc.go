// Package kvschema is the one place that defines how the namespace service
// lays its state out in the key-value store. It encodes and decodes keys and
// records; it does no I/O and knows nothing of the operations built on them.
//
// # Key table
//
// Every integer in a key is fixed-width big-endian, so that byte order is
// numeric order and a directory's children are one contiguous, name-sorted
// range. Inode ids are unique across all namespaces of the service.
//
//	key                                   value
//	0x00 "applied"                        uint64 index, uint64 term of the last applied log entry
//	0x00 "nextid"                         uint64 next inode id to allocate
//	0x00 "secret/" name                   a cluster secret (block token keys derive from "block-token"; "token-key/ID" signs tokens)
//	0x00 "nexttoken"                      uint64 next token id to issue
//	0x01 name                             Namespace record (EncodeNamespace); in the trash,
//	                                      with the times it was deleted and is to be purged
//	0x02 parent(8) name                   Dentry: child inode id(8), type(1)
//	0x03 inode(8)                         Inode record (EncodeInode); version 2 carries the rare
//	                                      extensions: storage policy, quota, ACL (inodeext.go)
//	0x04 inode(8)                         inline content of a small file (raw bytes)
//	0x05 inode(8) index(4)                Block record of a file (EncodeBlock; version 2 names
//	                                      the inode its object is under, when a concat moved it)
//	0x06 inode(8)                         detached subtree root awaiting purge; value: its bucket URI
//	0x07 inode(8) block(8)                block object awaiting deletion (EncodeGarbage); block 0
//	                                      asks for the file's objects no committed block names
//	0x08 holder 0x00 inode(8)             lease: holder is writing the file (empty value)
//	0x09 minute(8) request id             answer kept for retries of a mutation (EncodeAnswer),
//	                                      under the minute it was applied in
//	0x0B member(8)                        member of the Raft group (EncodeMember)
//	0x0C inode(8)                         a cache-mode entry's bucket state: its object's ETag,
//	                                      when the bucket last confirmed it, when a directory was
//	                                      last listed whole (EncodeObjectState)
//	0x0D inode(8) offset(8)               bytes a writer flushed (hflush/hsync) at offset that no
//	                                      block holds yet: a file being written's tail (raw bytes)
//	0x0E inode(8) name                    an extended attribute of the inode: name with its
//	                                      namespace ("user.x"), value the raw bytes
//	0x11 token(8)                         a token the service issued (EncodeTokenRecord)
//	0x12 import id                        a namespace import: its reserved ids, whether done (EncodeImport)
//
// The applied index is written in the same batch as the state it covers, so
// the state and the position in the log never disagree after a crash.
//
// # Records
//
// Records start with a format version byte (1; 2 for namespace records,
// which added the sync interval and still read version 1, and for inode
// records with extensions, which an inode without any never has) followed by fields
// in a fixed order: unsigned integers as uvarints, signed as varints, strings
// and byte slices as a uvarint length then the bytes. Decoders reject
// truncated input, unknown versions and trailing bytes.
package kvschema
