package cache

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// loadWorkers bounds the subdirectories read at once when loading; the work
// is mostly waiting for small reads, so more than the CPUs.
var loadWorkers = min(32, 4*runtime.GOMAXPROCS(0))

// subdirJob is one subdirectory to load.
type subdirJob struct {
	d    *dirState
	path string
}

// load rebuilds the index from the sidecars of every directory: it reads
// every subdirectory in parallel, keeps one incarnation per key, orders the
// blocks by the time they were cached (oldest evicted first) and evicts
// directories that are above their high watermark (a smaller capacity than
// last time). It reads no data file.
func (c *Cache) load() error {
	jobs, err := c.subdirJobs()
	if err != nil {
		return err
	}
	found, gen, err := c.loadSubdirs(jobs)
	if err != nil {
		return err
	}
	var stale []string
	byKey := map[string]*block{}
	for _, b := range found {
		old := byKey[b.key]
		if old != nil && old.gen > b.gen {
			old, b = b, old
		}
		if old != nil {
			stale = append(stale, old.dataPath(), old.metaPath())
		}
		byKey[b.key] = b
	}
	blocks := make([]*block, 0, len(byKey))
	for _, b := range byKey {
		blocks = append(blocks, b)
	}
	slices.SortFunc(blocks, func(x, y *block) int {
		return cmp.Or(cmp.Compare(x.created, y.created), strings.Compare(x.key, y.key))
	})
	c.mu.Lock()
	c.mu.nextGen = gen + 1
	for _, b := range blocks {
		c.addLoadedLocked(b)
	}
	for _, d := range c.dirs {
		if d.mu.used > d.high {
			files, _ := c.evictLocked(d, d.low)
			stale = append(stale, files...)
		}
	}
	c.mu.Unlock()
	c.removeFiles(stale)
	return nil
}

// subdirJobs creates the directories' roots and lists their subdirectories.
func (c *Cache) subdirJobs() ([]subdirJob, error) {
	var jobs []subdirJob
	for _, d := range c.dirs {
		if err := c.fs.MkdirAll(d.root, dirMode); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		// NB: a root made by an older worker (0755) is closed too: what it
		// holds is readable by its owner alone, files made 0644 before
		// included (docs/security.md).
		if err := claimRoot(d.root); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		names, err := c.fs.ReadDirNames(d.root)
		if err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
		for _, n := range names {
			if len(n) == 2 && isHex(n) && c.subdirIsDir(filepath.Join(d.root, n)) {
				jobs = append(jobs, subdirJob{d: d, path: filepath.Join(d.root, n)})
			}
		}
	}
	return jobs, nil
}

// subdirIsDir reports whether the subdirectory p is a directory. Anything
// else there (a symbolic link, which would take the blocks of its keys
// wherever it points) is no one's but the cache's (its root is the
// worker's user's alone), and is removed, so that the cache makes the
// directory again.
func (c *Cache) subdirIsDir(p string) bool {
	fi, err := os.Lstat(p)
	if err == nil && !fi.IsDir() {
		_ = c.fs.Remove(p)
	}
	return err == nil && fi.IsDir()
}

func isHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// loadSubdirs loads the subdirectories with loadWorkers goroutines. It
// returns the blocks and the greatest gen seen in a file name.
func (c *Cache) loadSubdirs(jobs []subdirJob) ([]*block, uint64, error) {
	ch := make(chan subdirJob)
	var mu sync.Mutex
	var all []*block
	var gen uint64
	var firstErr error
	var wg sync.WaitGroup
	for range min(loadWorkers, len(jobs)) {
		wg.Go(func() {
			for j := range ch {
				bs, g, err := c.loadSubdir(j)
				mu.Lock()
				all = append(all, bs...)
				gen = max(gen, g)
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return all, gen, firstErr
}

// diskBlock is what a subdirectory holds of one incarnation of a block.
type diskBlock struct {
	key              string
	gen              uint64
	data, meta, temp bool
}

// loadSubdir loads the blocks of one subdirectory and removes the files
// that are no block's: data without a sidecar, a sidecar without data,
// temporary sidecars, sidecars that do not decode or do not match.
func (c *Cache) loadSubdir(j subdirJob) ([]*block, uint64, error) {
	names, err := c.fs.ReadDirNames(j.path)
	if err != nil {
		return nil, 0, fmt.Errorf("cache: %w", err)
	}
	found := map[string]*diskBlock{}
	for _, n := range names {
		key, gen, ext, ok := parseName(n)
		if !ok || subdir(key) != filepath.Base(j.path) {
			continue // not ours: leave it
		}
		base := n[:len(key)+17]
		db := found[base]
		if db == nil {
			db = &diskBlock{key: key, gen: gen}
			found[base] = db
		}
		switch ext {
		case "data":
			db.data = true
		case "meta":
			db.meta = true
		default:
			db.temp = true
		}
	}
	var blocks []*block
	for base, db := range found {
		b, keep := c.loadBlock(j.d, db)
		if b != nil {
			blocks = append(blocks, b)
		} else if !keep {
			c.removeFiles([]string{filepath.Join(j.path, base+".data"), filepath.Join(j.path, base+".meta")})
		}
	}
	return blocks, maxGen(found), nil
}

func maxGen(found map[string]*diskBlock) uint64 {
	var g uint64
	for _, db := range found {
		g = max(g, db.gen)
	}
	return g
}

// parseName splits "<key>.<gen>.<ext>", ext one of data, meta, meta.tmp.
func parseName(name string) (key string, gen uint64, ext string, ok bool) {
	key, rest, ok := strings.Cut(name, ".")
	if !ok || validateKey(key) != nil || len(rest) < 18 || rest[16] != '.' || !isHex(rest[:16]) {
		return "", 0, "", false
	}
	gen, err := strconv.ParseUint(rest[:16], 16, 64)
	switch ext = rest[17:]; {
	case err != nil:
		return "", 0, "", false
	case ext == "data", ext == "meta", ext == "meta.tmp":
		return key, gen, ext, true
	}
	return "", 0, "", false
}

// loadBlock rebuilds one block from its sidecar. With no valid block it
// returns nil and whether to keep the files anyway: a sidecar that could not
// be read (but may be fine) is left for the next Open.
func (c *Cache) loadBlock(d *dirState, db *diskBlock) (b *block, keep bool) {
	b = &block{key: db.key, gen: db.gen, dir: d, base: blockBase(d.root, db.key, db.gen)}
	if db.temp {
		_ = c.fs.Remove(b.metaPath() + ".tmp")
	}
	if !db.data || !db.meta {
		return nil, false
	}
	buf, err := c.fs.ReadFile(b.metaPath())
	if err != nil {
		return nil, !errors.Is(err, fs.ErrNotExist)
	}
	s, err := decodeSidecar(buf)
	if err != nil || s.key != db.key || (s.pageSize != c.ps && s.pageSize != c.cfg.FinePageSize) {
		return nil, false
	}
	b.created, b.chunk, b.ps = s.created, s.chunk, s.pageSize
	b.mu.pages, b.mu.pinned = s.pages, s.pinned
	b.persist.metaLen, b.persist.records = s.validLen, s.records
	for _, pg := range s.pages {
		if pg.state == present {
			b.mu.npresent++
			b.mu.bytes += int64(pg.n)
		}
	}
	if b.mu.npresent == 0 {
		return nil, false
	}
	if s.torn || s.records > 2*b.mu.npresent+compactSlack {
		n, err := c.writeSidecar(b, presentRecordsLocked(b))
		if err != nil {
			return nil, false // appending to a torn log would lose the appends
		}
		b.persist.metaLen, b.persist.records = n, b.mu.npresent
	}
	return b, false
}

// addLoadedLocked puts a loaded block in the index and accounts its pages;
// a block its sidecar says is pinned is pinned again (if the pins still
// fit: pinLocked).
func (c *Cache) addLoadedLocked(b *block) {
	c.addBlockLocked(b)
	d := b.dir
	d.mu.pages += int64(b.mu.npresent)
	bytes := b.mu.bytes
	b.mu.bytes = 0
	addBytesLocked(b, bytes)
	if b.mu.pinned {
		if err := c.pinLocked(b); err != nil {
			b.mu.pinned = false // recorded at its next append; evictable till then
		}
	}
}
