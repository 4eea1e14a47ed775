package cache

import (
	"fmt"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// Clamp records a directory whose capacity Open lowered to fit its disk.
type Clamp struct {
	Path                 string
	Configured, Capacity int64
}

// fitDisks lowers the capacity of every directory whose file system cannot
// hold it (what the cache has there plus what is free), so that eviction
// by watermark keeps the disk from filling instead of every Put meeting
// ENOSPC. A disk shared with others can still fill later: Puts then evict
// and retry (retryNoSpace), and a page that cannot be stored is the
// caller's to serve from elsewhere. A directory left with less than a page
// is refused. File systems that cannot tell their free space are trusted.
func (c *Cache) fitDisks() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range c.dirs {
		avail, ok := cachefs.Available(c.fs, d.root)
		if !ok || d.capacity <= d.mu.used+avail {
			continue
		}
		fit := d.mu.used + avail
		if fit < c.ps {
			return fmt.Errorf("cache: directory %s: %d bytes free for a capacity of %d: no room for a page", c.cfg.Dirs[i].Path, avail, d.capacity)
		}
		c.clamped = append(c.clamped, Clamp{Path: c.cfg.Dirs[i].Path, Configured: d.capacity, Capacity: fit})
		d.setCapacity(fit, c.cfg)
	}
	return nil
}

// Clamped lists the directories whose capacity Open lowered to fit their
// disks, for the caller to warn about.
func (c *Cache) Clamped() []Clamp { return c.clamped }
