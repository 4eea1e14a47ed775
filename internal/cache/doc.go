// Package cache is a worker's local-disk cache of immutable blocks: it keeps
// pages of blocks in files on one or more local directories, checks every
// chunk of a page it reads against the chunk's CRC32C on every read, evicts
// by byte watermarks, rebuilds its index from small sidecar files on
// restart, and lends the open data file of a block to short-circuit readers
// (Acquire) with the CRCs of its chunks.
//
// It is not a fetcher: it never talks to the bucket. Callers ask Missing,
// fetch those ranges themselves and Put them (or, for a new block that a
// writer on the worker's host writes into its data file itself, Create
// the file and Commit it with its CRCs: Incoming); a corrupt page is dropped and
// reported (ErrCorrupt) for the caller to fetch again. It does not retry
// anything but a write that failed for want of space, which it retries in
// this one layer after evicting. It does not dedupe concurrent fetches of
// the same range either (the worker's single-flight does). Because blocks
// never change, it has no invalidation by version: a cached page is either
// the block's bytes or detectably corrupt.
//
// # On-disk format (sidecar version 2; version 1 is read too)
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
// Each block has a page size, Config.PageSize or, for a block FillFine
// created (a random reader's), Config.FinePageSize; its sidecar's header
// records it, and Open discards blocks of any other size. PageSize below
// is the block's. The data file is sparse: page i of the block is at
// offset i*PageSize, PageSize bytes long except for the block's last page,
// which may be shorter. Bytes outside the pages the sidecar claims are meaningless. A
// page is checksummed by chunks of the block's chunk size (a divisor of
// the page size): chunk j of page i is at i*PageSize + j*chunk, chunk bytes
// long except where the page ends. External readers (short-circuit) read a
// chunk at its offset and check it against the CRC the cache hands them.
//
// The sidecar (.meta) is an append-only log. All integers little-endian;
// CRCs are CRC32C (Castagnoli):
//
//	header:  magic "SCMF" | version u16 (=2) | key length u16 | page size u64
//	         | created u64 (unix ns, Config.Clock) | chunk size u32 | key
//	         | crc u32 of the above
//	records: kind u8 (1 page present, 2 page dropped, 3 pin) | 3 zero bytes
//	         | page index u32 (a pin's: 1 pinned, 0 unpinned) | page length
//	         | u32 (0 if dropped, and for a pin)
//	         | chunk crc u32, one per chunk of the page (one 0 if dropped or a pin)
//	         | crc u32 of the record's bytes before it
//
// A present record of a 1 MiB page in 64 KiB chunks is 80 bytes. Version 1
// had no chunk size in its header: its chunk is the page (one CRC per page),
// and its records are exactly version 2's with that chunk. Open reads both;
// a block keeps the chunk size its sidecar names for as long as it is
// cached (its appended records follow it, and a sidecar rewritten by
// compaction is written as version 2 with the same chunk size), while new
// blocks take Config.ChunkSize. Code that knows only version 1 deletes a
// version 2 sidecar and its block at Open, as any sidecar it cannot read:
// the pages are fetched again, never misread.
//
// Replaying the records in order gives the pages present and their CRCs. A
// record is appended only after the page data it claims has been written
// and (unless Config.NoSync) fdatasync'ed, so a crash loses the claims of
// the last writes but never leaves a claim whose data was not on disk. A
// torn or garbage tail (a crash mid-append: a record failing its CRC, or
// claiming more than a page, or longer than the bytes left) ends the
// replay; Open rewrites such a sidecar (to .meta.tmp, synced, then renamed
// over it). A log grown past twice its live pages plus 32 (pages dropped
// and put again) is compacted the same way when next appended to. Open
// deletes data files without a sidecar, sidecars without a data file,
// unreadable sidecars and all but the newest gen of a key. It never reads
// data files: a claim whose data is bad anyway (a disk that lied about
// fdatasync) is found by the CRC check of the first read and dropped.
//
// Pins. A pinned block (Pin: a HOT file's, internal/storagepolicy) is never
// evicted, up to the low watermark of its directory: a pin that would take
// the pinned bytes past it is refused (ErrPinsFull), and the block stays
// evictable, so that the room between the watermarks is always left to
// the other blocks. Its sidecar records the pin, so a restart keeps it; code that
// knows no pin record finds such a sidecar unreadable and drops the block,
// which is fetched again, never misread.
//
// Links. Open refuses a strata-cache-v1 that is a symbolic link or not the
// worker's user's, and removes a link where a subdirectory goes; no data
// file or sidecar is opened through a link at its name (cachefs), so that
// the cache's reads and writes stay in its directory (docs/security.md,
// "The worker's cache files").
package cache
