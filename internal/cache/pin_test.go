package cache

import (
	"fmt"
	"testing"
)

// A pinned block stays cached through a scan many times the cache's size,
// while the others are evicted; unpinned, it goes like any.
func TestPinnedBlocksAreNeverEvicted(t *testing.T) {
	cfg := testConfig(t, 40)
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	const size = 4*testPS + 100
	putPages(t, c, "hot", size, 0, 5)
	if err := c.Pin("hot"); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Pinned != size {
		t.Fatalf("pinned %d bytes, want %d", s.Pinned, size)
	}
	for i := range 200 {
		putPages(t, c, fmt.Sprintf("warm%d", i), 3*testPS, 0, 3)
	}
	if !cached(c, "hot", 0, size) || !c.Pinned("hot") {
		t.Fatal("the pinned block was evicted")
	}
	checkRead(t, c, "hot", size, 0, size)
	if cached(c, "warm0", 0, 1) || c.Stats().Evictions == 0 {
		t.Fatal("the scan evicted nothing")
	}
	c.Unpin("hot")
	for i := 200; i < 400; i++ {
		putPages(t, c, fmt.Sprintf("warm%d", i), 3*testPS, 0, 3)
	}
	if cached(c, "hot", 0, 1) {
		t.Fatal("the unpinned block survived another scan")
	}
}

// Pins fit under the low watermark: one past it is refused, counted, and
// its block stays evictable.
func TestPinsBeyondTheCacheAreRefused(t *testing.T) {
	cfg := testConfig(t, 20) // low watermark: 16 pages, high 19
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	for i := range 5 {
		key := fmt.Sprintf("h%d", i)
		putPages(t, c, key, 3*testPS, 0, 3)
		if err := c.Pin(key); err != nil {
			t.Fatalf("pin %d: %v", i, err)
		}
	}
	putPages(t, c, "h5", 3*testPS, 0, 3)
	wantErr(t, "the sixth pin", c.Pin("h5"), ErrPinsFull)
	if s := c.Stats(); s.PinRefusals != 1 || s.Pinned != 15*testPS || c.Pinned("h5") {
		t.Fatalf("stats %+v, h5 pinned %v", s, c.Pinned("h5"))
	}
	wantErr(t, "a pin of a block not cached", c.Pin("nope"), ErrMiss)
	// What is not pinned still flows through the room left.
	for i := range 20 {
		putPages(t, c, fmt.Sprintf("w%d", i), 2*testPS, 0, 2)
	}
	if !cached(c, "w19", 0, 1) || cached(c, "h5", 0, 1) {
		t.Fatal("the room between the watermarks does not turn over")
	}
}

// A pin survives a restart, and the compaction of its sidecar.
func TestPinSurvivesRestart(t *testing.T) {
	cfg := testConfig(t, 40)
	c := mustOpen(t, cfg)
	const size = 2 * testPS
	putPages(t, c, "hot", size, 0, 2)
	if err := c.Pin("hot"); err != nil {
		t.Fatal(err)
	}
	// Drops and puts again, enough to compact the sidecar.
	for range compactSlack + 4 {
		c.Invalidate("hot", testPS, 1)
		putPages(t, c, "hot", size, 1, 2)
	}
	c.Close()
	c = mustOpen(t, cfg)
	if !c.Pinned("hot") || c.Stats().Pinned != size {
		t.Fatalf("after a restart: pinned %v, %+v", c.Pinned("hot"), c.Stats())
	}
	c.Unpin("hot")
	c.Close()
	c = mustOpen(t, cfg)
	defer c.Close()
	if c.Pinned("hot") || !cached(c, "hot", 0, size) {
		t.Fatal("an unpinned block came back pinned, or not at all")
	}
}
