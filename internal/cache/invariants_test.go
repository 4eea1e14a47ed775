package cache

import (
	"fmt"
	"testing"
)

// checkInvariants checks the index against itself when no call is in
// flight: the accounting adds up, every block is in exactly one list of its
// directory, no page is pending, and blocks keep their shape.
func checkInvariants(t testing.TB, c *Cache) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.invariantsLocked(); err != nil {
		t.Fatal(err)
	}
}

func (c *Cache) invariantsLocked() error {
	inList := map[*block]bool{}
	for _, d := range c.dirs {
		var used, pages, blocks int64
		for seg := range d.mu.lists {
			var segBytes int64
			l := &d.mu.lists[seg]
			for b := l.back(); b != nil; b = l.prevOf(b) {
				if inList[b] || b.dir != d || b.mu.seg != segment(seg) || c.mu.blocks[b.key] != b {
					return fmt.Errorf("block %s misplaced", b.key)
				}
				inList[b] = true
				if err := c.blockInvariants(b); err != nil {
					return err
				}
				segBytes += b.mu.bytes
				used += b.mu.bytes
				pages += int64(b.mu.npresent)
				blocks++
			}
			if segBytes != d.mu.segBytes[seg] {
				return fmt.Errorf("segment %d holds %d bytes, accounted %d", seg, segBytes, d.mu.segBytes[seg])
			}
		}
		if used != d.mu.used || pages != d.mu.pages || blocks != d.mu.blocks || d.mu.reserved != 0 {
			return fmt.Errorf("dir %s: used %d/%d pages %d/%d blocks %d/%d reserved %d", d.root,
				used, d.mu.used, pages, d.mu.pages, blocks, d.mu.blocks, d.mu.reserved)
		}
		if d.mu.used > d.high {
			return fmt.Errorf("dir %s: used %d above the high watermark %d", d.root, d.mu.used, d.high)
		}
	}
	if len(inList) != len(c.mu.blocks) || c.mu.writers != 0 {
		return fmt.Errorf("%d blocks listed, %d indexed, %d writers", len(inList), len(c.mu.blocks), c.mu.writers)
	}
	return nil
}

func (c *Cache) blockInvariants(b *block) error {
	var n int
	var bytes int64
	short := false
	for i, pg := range b.mu.pages {
		switch {
		case pg.state == pending:
			return fmt.Errorf("%s: page %d pending with no Put in flight", b.key, i)
		case pg.state == absent:
			continue
		case short:
			return fmt.Errorf("%s: page %d after a short page", b.key, i)
		}
		short = int64(pg.n) < c.ps
		n++
		bytes += int64(pg.n)
	}
	if n != b.mu.npresent || bytes != b.mu.bytes || n == 0 || b.mu.writers != 0 || b.mu.removed {
		return fmt.Errorf("%s: %d pages (%d counted), %d bytes (%d counted), %d writers, removed %v",
			b.key, n, b.mu.npresent, bytes, b.mu.bytes, b.mu.writers, b.mu.removed)
	}
	return nil
}
