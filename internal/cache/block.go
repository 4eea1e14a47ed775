package cache

import (
	"fmt"
	"math"
	"path/filepath"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// MaxKeyLen is the longest key.
const MaxKeyLen = 128

// validateKey checks that key is 1 to 128 of [0-9a-z_-]: a file name on any
// file system, which never contains the '.' the on-disk names split on.
func validateKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return fmt.Errorf("%w: %d bytes", ErrInvalidKey, len(key))
	}
	for i := 0; i < len(key); i++ {
		switch ch := key[i]; {
		case '0' <= ch && ch <= '9', 'a' <= ch && ch <= 'z', ch == '_', ch == '-':
		default:
			return fmt.Errorf("%w: %q", ErrInvalidKey, key)
		}
	}
	return nil
}

type pageState uint8

const (
	absent  pageState = iota
	pending           // a Put is writing it
	present           // cached, with its CRC
)

type page struct {
	crcs  []uint32 // one per chunk of the block's chunk size; never changed, only replaced
	n     uint32   // length: the page size, or less for the block's last page
	state pageState
}

// segment is the part of a directory's SLRU a block is in.
type segment uint8

const (
	probation segment = iota // cached, not read since (or demoted)
	protected                // read at least once since cached
	pinned                   // never evicted (Pin; pin.go)
	segments
)

// block is one cached block: its pages and its place in eviction order.
//
// Shape invariant: at most one page is shorter than the page size, and no
// page after it is pending or present (it is the block's last page).
type block struct {
	key     string
	gen     uint64
	dir     *dirState
	base    string // path of its files without the extension
	created int64  // unix ns, from Config.Clock
	chunk   int64  // bytes per CRC: Config.ChunkSize when first cached, or its sidecar's
	ps      int64  // bytes per page: Config.PageSize or FinePageSize when first cached, or its sidecar's

	mu struct { // guarded by Cache.mu
		pages    []page
		npresent int
		bytes    int64  // sum of the present pages' lengths
		drops    uint64 // pages dropped so far: a reader that saw another value raced a drop
		writers  int    // calls writing its files (see beginWriteLocked)
		removed  bool   // out of the index; its files go when writers reach 0
		pinned   bool   // Pin was asked, and the sidecar says so: seg is pinned once in the index
		seg      segment
		prev     *block
		next     *block
		pending  []record // sidecar records not yet appended
	}

	// persist serializes appends to the sidecar.
	persist struct {
		sync.Mutex
		metaLen int64 // bytes of the sidecar written so far; 0: none yet
		records int   // records in it
	}
}

func (b *block) dataPath() string { return b.base + ".data" }
func (b *block) metaPath() string { return b.base + ".meta" }

// lastPageLocked returns the index of the block's last pending or present
// page, or -1.
func (b *block) lastPageLocked() int64 {
	for i := len(b.mu.pages) - 1; i >= 0; i-- {
		if b.mu.pages[i].state != absent {
			return int64(i)
		}
	}
	return -1
}

// chunkCRCs returns the CRCs of page, one per chunk of chunk bytes.
func chunkCRCs(page []byte, chunk int64) []uint32 {
	crcs := make([]uint32, 0, (int64(len(page))+chunk-1)/chunk)
	for i := int64(0); i < int64(len(page)); i += chunk {
		crcs = append(crcs, Checksum(page[i:min(i+chunk, int64(len(page)))]))
	}
	return crcs
}

// eofLocked returns the index of the block's short last page, -1 if none is
// known (the block's end is then unknown).
func (b *block) eofLocked() int64 {
	i := b.lastPageLocked()
	if i >= 0 && int64(b.mu.pages[i].n) < b.ps {
		return i
	}
	return -1
}

// lru is an intrusive doubly linked list of blocks, most recent at the front.
type lru struct{ root block }

func (l *lru) init() { l.root.mu.next, l.root.mu.prev = &l.root, &l.root }

func (l *lru) pushFront(b *block) {
	b.mu.prev, b.mu.next = &l.root, l.root.mu.next
	b.mu.next.mu.prev = b
	l.root.mu.next = b
}

func (l *lru) remove(b *block) {
	b.mu.prev.mu.next = b.mu.next
	b.mu.next.mu.prev = b.mu.prev
	b.mu.prev, b.mu.next = nil, nil
}

// back returns the least recent block, nil if the list is empty.
func (l *lru) back() *block {
	if l.root.mu.prev == &l.root {
		return nil
	}
	return l.root.mu.prev
}

// prevOf returns the block more recent than b, nil at the front.
func (l *lru) prevOf(b *block) *block {
	if b.mu.prev == &l.root {
		return nil
	}
	return b.mu.prev
}

// dirState is one directory: its accounting and its eviction order.
type dirState struct {
	root      string // <Dir.Path>/strata-cache-v1
	capacity  int64
	weight    float64 // capacity, for placement
	high, low int64   // watermarks in bytes
	protMax   int64   // bytes the protected segment may hold

	mu struct { // guarded by Cache.mu
		used     int64 // bytes of present pages
		reserved int64 // bytes of pages being written
		blocks   int64
		pages    int64
		segBytes [segments]int64
		lists    [segments]lru
	}
}

// formatDir is the directory of the on-disk format inside each Dir.
const formatDir = "strata-cache-v1"

// protectedShare is the share of the low watermark the protected segment
// may hold, leaving the rest for new blocks to prove themselves.
const protectedShare = 0.8

func newDirState(d Dir, cfg Config) *dirState {
	s := &dirState{root: filepath.Join(d.Path, formatDir)}
	s.setCapacity(d.Capacity, cfg)
	for i := range s.mu.lists {
		s.mu.lists[i].init()
	}
	return s
}

// setCapacity sets the capacity and what derives from it.
func (s *dirState) setCapacity(capacity int64, cfg Config) {
	s.capacity, s.weight = capacity, float64(capacity)
	s.high = int64(float64(capacity) * cfg.HighWatermark)
	s.low = int64(float64(capacity) * cfg.LowWatermark)
	s.protMax = int64(float64(s.low) * protectedShare)
}

// pickDir places key by weighted rendezvous hashing: each directory scores
// weight/-ln(u) with u uniform from hash(key, dir), and the highest wins, so
// directories fill in proportion to their capacity and a key always lands
// in the same one while the configuration stays.
func (c *Cache) pickDir(key string) *dirState {
	if len(c.dirs) == 1 {
		return c.dirs[0]
	}
	h := xxhash.Sum64String(key)
	var best *dirState
	bestScore := math.Inf(-1)
	for i, d := range c.dirs {
		x := mix64(h ^ uint64(i+1)*0x9e3779b97f4a7c15)
		u := (float64(x>>11) + 0.5) / (1 << 53) // in (0, 1)
		if score := d.weight / -math.Log(u); score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

// mix64 is splitmix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// subdir is the subdirectory of key's files.
func subdir(key string) string { return fmt.Sprintf("%02x", xxhash.Sum64String(key)&0xff) }

// blockBase is the path of a block's files without the extension.
func blockBase(root, key string, gen uint64) string {
	return filepath.Join(root, subdir(key), fmt.Sprintf("%s.%016x", key, gen))
}

// addBlockLocked puts a new block in the index, least recent if old (when
// loading, oldest first), else most recent.
func (c *Cache) addBlockLocked(b *block) {
	c.mu.blocks[b.key] = b
	b.dir.mu.blocks++
	b.mu.seg = probation
	b.dir.mu.lists[probation].pushFront(b)
}

// newBlockLocked creates an empty block for key with pages of ps bytes in
// the index.
func (c *Cache) newBlockLocked(key string, ps int64) *block {
	gen := c.mu.nextGen
	c.mu.nextGen++
	return c.addNewBlockLocked(key, c.pickDir(key), gen, ps)
}

// addNewBlockLocked puts an empty block for key, of incarnation gen in d,
// with pages of ps bytes, in the index.
func (c *Cache) addNewBlockLocked(key string, d *dirState, gen uint64, ps int64) *block {
	b := &block{key: key, gen: gen, dir: d, base: blockBase(d.root, key, gen), created: c.cfg.Clock().UnixNano(),
		chunk: min(c.cfg.ChunkSize, ps), ps: ps}
	c.addBlockLocked(b)
	return b
}

// addBytesLocked accounts delta bytes of present pages to b.
func addBytesLocked(b *block, delta int64) {
	b.mu.bytes += delta
	b.dir.mu.used += delta
	b.dir.mu.segBytes[b.mu.seg] += delta
}

// removeBlockLocked takes b out of the index. It returns the files to
// remove once the lock is released, unless writers still use them (the last
// one removes them, see endWriteLocked).
func (c *Cache) removeBlockLocked(b *block) []string {
	if b.mu.removed {
		return nil
	}
	d := b.dir
	delete(c.mu.blocks, b.key)
	d.mu.lists[b.mu.seg].remove(b)
	d.mu.blocks--
	d.mu.pages -= int64(b.mu.npresent)
	addBytesLocked(b, -b.mu.bytes)
	b.mu.npresent = 0
	b.mu.removed = true
	b.mu.pending = nil
	if b.mu.writers > 0 {
		return nil
	}
	return []string{b.dataPath(), b.metaPath()}
}

// removeFiles removes files of removed blocks. Failures are left for the
// next Open to clean up: the index no longer refers to the files.
func (c *Cache) removeFiles(paths []string) {
	for _, p := range paths {
		_ = c.fs.Remove(p)
	}
}

// beginWriteLocked registers a call about to write b's files: b's files stay
// while it runs, and Close waits for it. Pair with endWrite.
func (c *Cache) beginWriteLocked(b *block) {
	b.mu.writers++
	c.mu.writers++
}

// endWriteLocked ends what beginWriteLocked began, and returns the files to
// remove if b was removed meanwhile or is left empty.
func (c *Cache) endWriteLocked(b *block) []string {
	b.mu.writers--
	c.mu.writers--
	c.mu.changed.Broadcast()
	if b.mu.writers > 0 {
		return nil
	}
	if b.mu.removed {
		return []string{b.dataPath(), b.metaPath()}
	}
	if b.mu.npresent == 0 {
		return c.removeBlockLocked(b)
	}
	return nil
}

// endWrite is endWriteLocked for callers not holding the lock.
func (c *Cache) endWrite(b *block) {
	c.mu.Lock()
	files := c.endWriteLocked(b)
	c.mu.Unlock()
	c.removeFiles(files)
}
