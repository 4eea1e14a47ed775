package cache

import (
	"fmt"
)

// Eviction is by block, per directory, in segmented-LRU order (SLRU, the
// two-queue idea of 2Q without its ghost list). A block enters the
// probation segment; a hit (ReadAt or Acquire) moves it to the protected
// segment, which may hold protectedShare of the low watermark, its least
// recent overflow going back to the front of probation. Victims come from
// the back of probation first, then of protected. So one scan of many
// blocks read once cannot flush the blocks read repeatedly, and among equals
// the least recently used goes first. A Put refreshes a block's place in
// its segment but does not promote it: filling a block page by page is not
// reuse. Blocks being written are skipped, and pinned ones are in a segment
// of their own that eviction never takes from (pin.go).
//
// Eviction by block rather than by page frees space for real (the files are
// unlinked) without punching holes, and keeps the index small.

// touchLocked records a use of b: a hit promotes it, a Put only refreshes it.
func (c *Cache) touchLocked(b *block, hit bool) {
	d := b.dir
	d.mu.lists[b.mu.seg].remove(b)
	if b.mu.seg == pinned {
		d.mu.lists[pinned].pushFront(b)
		return
	}
	if hit && b.mu.seg == probation {
		d.mu.segBytes[probation] -= b.mu.bytes
		b.mu.seg = protected
		d.mu.segBytes[protected] += b.mu.bytes
	}
	d.mu.lists[b.mu.seg].pushFront(b)
	if hit {
		d.demoteLocked()
	}
}

// demoteLocked moves the least recent protected blocks back to probation
// until the protected segment fits its share. The most recent one stays.
func (d *dirState) demoteLocked() {
	l := &d.mu.lists[protected]
	for d.mu.segBytes[protected] > d.protMax {
		v := l.back()
		if v == nil || l.prevOf(v) == nil {
			return
		}
		l.remove(v)
		d.mu.segBytes[protected] -= v.mu.bytes
		v.mu.seg = probation
		d.mu.segBytes[probation] += v.mu.bytes
		d.mu.lists[probation].pushFront(v)
	}
}

// evictLocked evicts blocks of d until its used and reserved bytes are at
// most target, or nothing more can go. It returns the files to remove and
// how many blocks went.
func (c *Cache) evictLocked(d *dirState, target int64) (files []string, n int) {
	for _, seg := range [...]segment{probation, protected} {
		l := &d.mu.lists[seg]
		for v := l.back(); v != nil && d.mu.used+d.mu.reserved > target; {
			prev := l.prevOf(v)
			if v.mu.writers == 0 {
				c.evictions.Add(1)
				c.evictedBytes.Add(uint64(v.mu.bytes))
				files = append(files, c.removeBlockLocked(v)...)
				n++
			}
			v = prev
		}
	}
	return files, n
}

// reserveLocked reserves need bytes in d for pages about to be written.
// Above the high watermark it first evicts down to the low one; if even
// that leaves no room below the high watermark, it fails with ErrFull. The
// files of evicted blocks are returned to be removed.
func (c *Cache) reserveLocked(d *dirState, need int64) ([]string, error) {
	var files []string
	if d.mu.used+d.mu.reserved+need > d.high {
		files, _ = c.evictLocked(d, d.low-need)
		if d.mu.used+d.mu.reserved+need > d.high {
			return files, fmt.Errorf("%w: %d bytes wanted in %s, %d used and %d being written of %d allowed",
				ErrFull, need, d.root, d.mu.used, d.mu.reserved, d.high)
		}
	}
	d.mu.reserved += need
	return files, nil
}

// evictForSpace makes room after the file system said it has none (a disk
// shared with others can fill below the cache's capacity): it evicts a band
// of high-minus-low watermark bytes, at least need, and removes the files.
// It reports whether anything was evicted.
func (c *Cache) evictForSpace(d *dirState, need int64) bool {
	c.mu.Lock()
	target := d.mu.used + d.mu.reserved - max(need, d.high-d.low)
	files, n := c.evictLocked(d, target)
	c.mu.Unlock()
	c.removeFiles(files)
	return n > 0
}

// dropPageLocked drops page i of b, which must be present.
func (c *Cache) dropPageLocked(b *block, i int64) {
	pg := &b.mu.pages[i]
	pg.state = absent
	b.mu.npresent--
	b.dir.mu.pages--
	addBytesLocked(b, -int64(pg.n))
	b.mu.drops++
	b.mu.pending = append(b.mu.pending, record{kind: recDropped, idx: uint32(i)})
}

// settleLocked follows drops of b's pages: an empty block leaves the index;
// otherwise the caller must record the drops in the sidecar (persistPending)
// after releasing the lock.
//
// NB: after Close, files are left alone; the sidecar keeps claiming the
// pages, which the next Open trusts and the first read drops again.
func (c *Cache) settleLocked(b *block) (files []string, record bool) {
	if c.mu.closed {
		if b.mu.npresent == 0 && b.mu.writers == 0 {
			c.removeBlockLocked(b)
		}
		return nil, false
	}
	if b.mu.npresent == 0 && b.mu.writers == 0 {
		return c.removeBlockLocked(b), false
	}
	c.beginWriteLocked(b)
	return nil, true
}

// persistPending appends b's pending records (drops, pins), best effort: a
// drop the sidecar misses is found again by the CRC check after a restart,
// and a pin it misses leaves the block evictable after one.
func (c *Cache) persistPending(b *block) {
	_ = c.persist(b, nil)
	c.endWrite(b)
}

// Invalidate drops the cached pages of key that overlap [off, off+length),
// typically because a short-circuit reader found one failing its CRC. Each
// page dropped counts as a corruption.
func (c *Cache) Invalidate(key string, off, length int64) {
	if validateKey(key) != nil || checkRange(off, length) != nil {
		return
	}
	c.mu.Lock()
	b := c.mu.blocks[key]
	if b == nil || c.mu.closed {
		c.mu.Unlock()
		return
	}
	last := min((off+length-1)/b.ps, int64(len(b.mu.pages))-1)
	dropped := 0
	for i := off / b.ps; i <= last; i++ {
		if b.mu.pages[i].state == present {
			c.dropPageLocked(b, i)
			dropped++
		}
	}
	var files []string
	var record bool
	if dropped > 0 {
		files, record = c.settleLocked(b)
	}
	c.mu.Unlock()
	c.corruptions.Add(uint64(dropped))
	c.removeFiles(files)
	if record {
		c.persistPending(b)
	}
}

// Drop removes every page of key, as when the block is deleted. Handles on
// it stay readable.
func (c *Cache) Drop(key string) {
	if validateKey(key) != nil {
		return
	}
	c.mu.Lock()
	var files []string
	if b := c.mu.blocks[key]; b != nil && !c.mu.closed {
		files = c.removeBlockLocked(b)
	}
	c.mu.Unlock()
	c.removeFiles(files)
}
