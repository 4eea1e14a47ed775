// Package cache is a worker's local-disk cache of immutable blocks: it keeps
// pages of blocks in files on one or more local directories, checks every
// page against its CRC32C on every read, evicts by byte watermarks, rebuilds
// its index from small sidecar files on restart, and lends the open data
// file of a block to short-circuit readers (Acquire).
//
// It is not a fetcher: it never talks to the bucket. Callers ask Missing,
// fetch those ranges themselves and Put them; a corrupt page is dropped and
// reported (ErrCorrupt) for the caller to fetch again. It does not retry
// anything but a write that failed for want of space, which it retries in
// this one layer after evicting. It does not dedupe concurrent fetches of
// the same range either (the worker's single-flight does). Because blocks
// never change, it has no invalidation by version: a cached page is either
// the block's bytes or detectably corrupt.
//
// # On-disk format (version 1)
//
// Each configured directory holds a tree
//
//	<dir>/strata-cache-v1/<hh>/<key>.<gen>.data
//	<dir>/strata-cache-v1/<hh>/<key>.<gen>.meta
//
// where <hh> is the low byte of xxhash64(key) in 2 lower-case hex digits
// (256 subdirectories: a million blocks make ~8,000 entries each, which
// ext4 and XFS index; fewer directories to list at Open) and
// <gen> is 16 lower-case hex digits, an incarnation number unique in the
// cache (Open starts above any it finds). A block evicted
// and cached again gets a new gen, so a path never names two incarnations:
// an open file is always the incarnation its opener looked up.
//
// The data file is sparse: page i of the block is at offset i*PageSize,
// PageSize bytes long except for the block's last page, which may be
// shorter. Bytes outside the pages the sidecar claims are meaningless.
// External readers (short-circuit) pread a page at i*PageSize and check it
// against the CRC the cache hands them.
//
// The sidecar (.meta) is an append-only log. All integers little-endian;
// CRCs are CRC32C (Castagnoli):
//
//	header:  magic "SCMF" | version u16 (=1) | key length u16 | page size u64
//	         | created u64 (unix ns, Config.Clock) | key | crc u32 of the above
//	records: kind u8 (1 page present, 2 page dropped) | 3 zero bytes
//	         | page index u32 | page length u32 | page crc u32
//	         | crc u32 of the record's first 16 bytes          (20 bytes each)
//
// Replaying the records in order gives the pages present and their CRCs. A
// record is appended only after the page data it claims has been written
// and (unless Config.NoSync) fdatasync'ed, so a crash loses the claims of
// the last writes but never leaves a claim whose data was not on disk. A
// torn or garbage tail (a crash mid-append) ends the replay; Open rewrites
// such a sidecar (to .meta.tmp, synced, then renamed over it). A log grown
// past twice its live pages plus 32 (pages dropped and put again) is
// compacted the same way when next appended to. Open deletes data files
// without a sidecar, sidecars without a data file, unreadable sidecars and
// all but the newest gen of a key. It never reads data files: a claim whose
// data is bad anyway (a disk that lied about fdatasync) is found by the CRC
// check of the first read and dropped.
package cache
