package cache

import (
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrInvalidKey: a key outside [0-9a-z_-]{1,128}.
	ErrInvalidKey = errors.New("cache: invalid key")
	// ErrInvalidRange: a negative offset or length, a Put not aligned on a
	// page, or pages that contradict what is cached (a short page that is
	// not the block's last).
	ErrInvalidRange = errors.New("cache: invalid range")
	// ErrMiss: a page the call needs is not cached.
	ErrMiss = errors.New("cache: miss")
	// ErrCorrupt: a cached page failed its CRC check; it has been dropped,
	// and fetching it again and putting it fixes the cache.
	ErrCorrupt = errors.New("cache: corrupt page dropped")
	// ErrFull: no space for a Put even after evicting every block that can
	// be evicted (the others are being written), or the disk is full of
	// files that are not the cache's.
	ErrFull = errors.New("cache: full")
	// ErrClosed: the cache has been closed.
	ErrClosed = errors.New("cache: closed")
)

// Dir is one directory (typically one disk) the cache may use.
type Dir struct {
	Path     string
	Capacity int64 // bytes of page data the cache may keep there
}

// Config configures a cache. Zero values take the defaults.
type Config struct {
	Dirs []Dir
	// PageSize is the unit of caching and checksumming, a multiple of 4 KiB
	// (default 1 MiB). It is part of the on-disk format: blocks cached with
	// another page size are discarded at Open.
	PageSize int64
	// ChunkSize is the unit of checksumming inside a page: a page has a
	// CRC32C per chunk, so that a read of a few KiB checks the chunks it
	// touches instead of a whole page (docs/datapath.md, "The cache"). A
	// multiple of 4 KiB that divides PageSize (default 64 KiB, or PageSize
	// if smaller). A block keeps the chunk size it was cached with, which
	// its sidecar records (a version 1 sidecar: one CRC per page), so
	// changing it leaves the blocks already cached as they are.
	ChunkSize int64
	// FinePageSize is the page of the blocks a reader of scattered ranges
	// caches first (FillFine): a multiple of 4 KiB dividing PageSize, and
	// a multiple of ChunkSize if larger (default 16 KiB, or PageSize if
	// smaller); such a block's chunk is the smaller of the two. A block so
	// cached holds what was read, rounded to FinePageSize, where whole
	// pages would fetch from the bucket up to three times the column
	// chunks of about 0.3 MB a Parquet reader asks for (docs/benchmarks.md,
	// TPC-DS), and 64 KiB pages a fifth more. The price: an index entry of
	// about 48 bytes per page, 3 MiB of memory per GiB cached in 16 KiB
	// pages. A block keeps its page size, which its sidecar records, for as
	// long as it is cached.
	FinePageSize int64
	// HighWatermark and LowWatermark are fractions of each Dir's Capacity
	// (default 0.95 and 0.80): a Put that would take a directory above the
	// high one first evicts it down to the low one.
	HighWatermark, LowWatermark float64
	// Clock stamps blocks when they are first cached, which orders them for
	// eviction after a restart; default time.Now.
	Clock func() time.Time
	// FS is the file system; default cachefs.OS(). Tests inject faults here.
	FS cachefs.FS
	// NoSync skips the fdatasync of data before its pages are recorded in
	// the sidecar. Puts get faster; after a machine crash (not a process
	// crash) a sidecar may then claim pages whose data never reached the
	// disk, which the CRC check of the first read catches.
	NoSync bool
}

// DefaultPageSize is the page size unless configured.
const DefaultPageSize = 1 << 20

// DefaultChunkSize is the checksum chunk unless configured.
const DefaultChunkSize = 64 << 10

// DefaultFinePageSize is the fine page size unless configured.
const DefaultFinePageSize = 16 << 10

// maxPages bounds the pages of one block (page indexes are u32 on disk, and
// a block's index is a slice).
const maxPages = 1 << 18

// MaxPages is the most pages a block may have: a block longer than
// MaxPages fine pages cannot be cached by FillFine.
const MaxPages = maxPages

func (c *Config) setDefaults() error {
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = min(DefaultChunkSize, c.PageSize)
	}
	if c.FinePageSize == 0 {
		c.FinePageSize = min(DefaultFinePageSize, c.PageSize)
	}
	if c.HighWatermark == 0 {
		c.HighWatermark = 0.95
	}
	if c.LowWatermark == 0 {
		c.LowWatermark = 0.80
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.FS == nil {
		c.FS = cachefs.OS()
	}
	switch {
	case len(c.Dirs) == 0:
		return errors.New("cache: no directories")
	case c.PageSize < 4096 || c.PageSize%4096 != 0 || c.PageSize > 1<<30:
		return fmt.Errorf("cache: page size %d is not a multiple of 4 KiB up to 1 GiB", c.PageSize)
	case c.ChunkSize < 4096 || c.ChunkSize%4096 != 0 || c.PageSize%c.ChunkSize != 0:
		return fmt.Errorf("cache: chunk size %d is not a multiple of 4 KiB dividing the page size %d", c.ChunkSize, c.PageSize)
	case c.FinePageSize < 4096 || c.FinePageSize%4096 != 0 || c.PageSize%c.FinePageSize != 0 ||
		c.FinePageSize%min(c.ChunkSize, c.FinePageSize) != 0:
		return fmt.Errorf("cache: fine page size %d is not a multiple of 4 KiB dividing the page size %d (and of the chunk size %d if larger)", c.FinePageSize, c.PageSize, c.ChunkSize)
	case !(0 < c.LowWatermark && c.LowWatermark < c.HighWatermark && c.HighWatermark <= 1):
		return fmt.Errorf("cache: watermarks must satisfy 0 < low (%v) < high (%v) <= 1", c.LowWatermark, c.HighWatermark)
	}
	seen := map[string]bool{}
	for _, d := range c.Dirs {
		if d.Path == "" || d.Capacity <= 0 {
			return fmt.Errorf("cache: directory %q needs a path and a positive capacity", d.Path)
		}
		if seen[filepath.Clean(d.Path)] {
			return fmt.Errorf("cache: directory %q listed twice", d.Path)
		}
		seen[filepath.Clean(d.Path)] = true
	}
	return nil
}

// Stats are a snapshot of the cache's size and counters. Counters start at
// zero at Open.
type Stats struct {
	Capacity int64 // sum of the directories' capacities
	Used     int64 // bytes of cached pages
	Reserved int64 // bytes set aside for pages being written, and incoming blocks
	Blocks   int64 // blocks with at least one cached page
	Pages    int64
	// Hits and Misses count ReadAt and Acquire calls: answered from the
	// cache (io.EOF past a known end included) or not (ErrMiss, ErrCorrupt).
	Hits, Misses uint64
	Evictions    uint64 // blocks evicted for space
	EvictedBytes uint64
	Corruptions  uint64 // pages dropped for a bad CRC, here or by Invalidate
	// Filled is the bytes of pages stored: fetched from the bucket, written
	// through, loaded, or committed by a short-circuit writer.
	Filled uint64
	// Pinned is the bytes of pinned blocks (Pin), never evicted;
	// PinRefusals counts the pins refused because they would not fit.
	Pinned      int64
	PinRefusals uint64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC32C (Castagnoli) of p, the checksum of a chunk.
func Checksum(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }

// Cache is a local-disk cache of immutable blocks, cached page by page. It
// is safe for concurrent use.
type Cache struct {
	cfg  Config
	fs   cachefs.FS
	ps   int64 // cfg.PageSize
	dirs []*dirState
	bufs sync.Pool // *[]byte of one page, for partial-page reads

	hits, misses, evictions, evictedBytes, corruptions, filled, pinRefusals atomic.Uint64

	clamped []Clamp // set by Open

	mu struct {
		sync.Mutex
		// changed is signalled when pages stop being pending and when
		// writers leave.
		changed sync.Cond
		blocks  map[string]*block
		nextGen uint64
		writers int // calls between beginWriteLocked and endWrite
		closed  bool
	}
}

// Open opens the cache over cfg.Dirs, creating what is missing, and rebuilds
// its index from the sidecars found there (see the package doc).
func Open(cfg Config) (*Cache, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	c := &Cache{cfg: cfg, fs: cfg.FS, ps: cfg.PageSize}
	c.bufs.New = func() any { b := make([]byte, c.ps); return &b }
	c.mu.changed.L = &c.mu.Mutex
	c.mu.blocks = map[string]*block{}
	for _, d := range cfg.Dirs {
		c.dirs = append(c.dirs, newDirState(d, cfg))
	}
	if err := c.load(); err != nil {
		return nil, err
	}
	if err := c.fitDisks(); err != nil {
		return nil, err
	}
	return c, nil
}

// PageSize is the cache's unit of caching, but for blocks cached by
// FillFine.
func (c *Cache) PageSize() int64 { return c.ps }

// FinePageSize is the unit of caching of blocks FillFine creates.
func (c *Cache) FinePageSize() int64 { return c.cfg.FinePageSize }

// Close waits for the Puts and other writes in flight, then refuses every
// further call with ErrClosed (Missing answers everything missing). Handles
// stay readable until released.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.closed = true
	for c.mu.writers > 0 {
		c.mu.changed.Wait()
	}
	return nil
}

// Stats returns the current sizes and counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Evictions: c.evictions.Load(),
		EvictedBytes: c.evictedBytes.Load(), Corruptions: c.corruptions.Load(), Filled: c.filled.Load(),
		PinRefusals: c.pinRefusals.Load(),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.dirs {
		s.Capacity += d.capacity
		s.Used += d.mu.used
		s.Reserved += d.mu.reserved
		s.Blocks += d.mu.blocks
		s.Pages += d.mu.pages
		s.Pinned += d.mu.segBytes[pinned]
	}
	return s
}

// The modes of the cache's directories and files: the worker's user's
// alone. Other users' clients read cached blocks through the worker, or
// short-circuit with a descriptor the worker passes them against a valid
// block access token; never by path.
const (
	dirMode  = 0o700
	fileMode = 0o600
)
