// Package bulkload builds the state of a whole namespace tree at once, from
// an image of it (internal/fsimage's Source: an HDFS fsimage, its text, or
// a synthetic tree), as sorted tables that the namespace service ingests
// (pebblekv.Store.Ingest) instead of applying one create at a time. It
// writes the records of internal/kvschema: a directory entry and an inode
// for every file and directory, the directories' per-subtree aggregates
// (files, directories and bytes below, entries in it) summed in the same
// build, and a directory's quotas in its inode (HDFS's space quota divided
// by the cluster's default replication: Options.Replication). It is not the
// import's protocol with the service (internal/metaserver's importer) and
// knows nothing of Raft.
//
// # How
//
// Three passes over the source: the ids (a bitmap over their span, whose
// ranks number the inodes 0..N-1), the children (each inode's parent, by
// rank), the inodes (each written to a scratch file, its offset kept by
// rank, its size added to its directory's). Then, in memory, which inodes
// the root reaches (those only snapshots see it does not), each
// directory's depth and path length, and the subtree sums. Then the
// tables, one key range at a time, each in key order: the directory
// entries (directories by rank, each one's children by name), the inodes
// (by rank). The inode of rank r gets id Base+r, so ids are
// those of the range the service reserved, and keys come out sorted
// without a sort of the whole tree.
//
// Memory: about 17 bytes an inode (parent 4, offset 8, child list 4,
// bitmaps) and 80 a directory, plus the scratch file's pages, which the
// kernel keeps or drops (1.8 GB at 100 million inodes).
//
// # Resuming
//
// The work directory holds the tables written so far and a manifest of
// them. A build that stopped (a crash, a kill) and is run again with the
// same source and options redoes the passes, which are quick, and writes
// only the tables the manifest does not list; each table's content depends
// only on the source, so the result is the same as a build that never
// stopped. The manifest is written (and synced) after each table.
package bulkload
