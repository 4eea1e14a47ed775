package cache

import (
	"errors"
	"fmt"
)

// ErrPinsFull: pinning a block would take the pinned bytes of its
// directory past the directory's low watermark; it stays evictable.
var ErrPinsFull = errors.New("cache: the pinned blocks would not fit")

// Pin keeps key's block cached: eviction passes it by, however full the
// cache, until Unpin or Drop. Its pages cached later are pinned with it.
// A block pins only while the directory's pinned bytes, its own included,
// stay under the low watermark: past that Pin fails with ErrPinsFull
// (counted in Stats.PinRefusals) and the block is left as it was, so that
// pins never take the room between the watermarks, where every other block
// is cached and evicted. A block not cached is ErrMiss.
func (c *Cache) Pin(key string) error {
	if err := validateKey(key); err != nil {
		return err
	}
	c.mu.Lock()
	b := c.mu.blocks[key]
	switch {
	case c.mu.closed:
		c.mu.Unlock()
		return ErrClosed
	case b == nil:
		c.mu.Unlock()
		return fmt.Errorf("%w: pin of %s", ErrMiss, key)
	case b.mu.seg == pinned:
		c.mu.Unlock()
		return nil
	}
	if err := c.pinLocked(b); err != nil {
		c.pinRefusals.Add(1)
		c.mu.Unlock()
		return err
	}
	b.mu.pinned = true
	b.mu.pending = append(b.mu.pending, record{kind: recPinned, idx: 1})
	c.beginWriteLocked(b)
	c.mu.Unlock()
	c.persistPending(b) // best effort: a pin lost in a crash leaves the block evictable
	return nil
}

// pinLocked moves b to its directory's pinned segment, if its bytes fit.
func (c *Cache) pinLocked(b *block) error {
	d := b.dir
	if have := d.mu.segBytes[pinned]; have+b.mu.bytes > d.low {
		return fmt.Errorf("%w: %d bytes pinned in %s and %d more asked, of %d it may pin (its low watermark)",
			ErrPinsFull, have, d.root, b.mu.bytes, d.low)
	}
	d.mu.lists[b.mu.seg].remove(b)
	d.mu.segBytes[b.mu.seg] -= b.mu.bytes
	b.mu.seg = pinned
	d.mu.segBytes[pinned] += b.mu.bytes
	d.mu.lists[pinned].pushFront(b)
	return nil
}

// Unpin makes key's block evictable again, the most recent of those not
// read since cached.
func (c *Cache) Unpin(key string) {
	if validateKey(key) != nil {
		return
	}
	c.mu.Lock()
	b := c.mu.blocks[key]
	if b == nil || c.mu.closed || b.mu.seg != pinned {
		c.mu.Unlock()
		return
	}
	d := b.dir
	d.mu.lists[pinned].remove(b)
	d.mu.segBytes[pinned] -= b.mu.bytes
	b.mu.seg, b.mu.pinned = probation, false
	d.mu.segBytes[probation] += b.mu.bytes
	d.mu.lists[probation].pushFront(b)
	b.mu.pending = append(b.mu.pending, record{kind: recPinned, idx: 0})
	c.beginWriteLocked(b)
	c.mu.Unlock()
	c.persistPending(b)
}

// Pinned reports whether key's block is pinned.
func (c *Cache) Pinned(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.mu.blocks[key]
	return b != nil && b.mu.seg == pinned
}
