package cache

import (
	"fmt"
	"testing"
)

func TestEvictionKeepsUsedUnderTheHighWatermark(t *testing.T) {
	cfg := testConfig(t, 100)
	cfg.HighWatermark, cfg.LowWatermark = 0.9, 0.6
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	high := int64(0.9 * 100 * testPS)
	for i := range 300 {
		putPages(t, c, fmt.Sprintf("k%d", i), 3*testPS+100, 0, 4)
		if s := c.Stats(); s.Used > high {
			t.Fatalf("after %d blocks, used %d > high watermark %d", i+1, s.Used, high)
		}
	}
	s := c.Stats()
	if s.Evictions == 0 || s.EvictedBytes != uint64(300*(3*testPS+100)-s.Used) {
		t.Fatalf("stats %+v", s)
	}
	// The newest block is always there, the oldest long gone.
	checkRead(t, c, "k299", 3*testPS+100, 0, 3*testPS+100)
	if cached(c, "k0", 0, 1) {
		t.Fatal("k0 survived 300 blocks through a 100-page cache")
	}
}

func TestEvictionOrder(t *testing.T) {
	cfg := testConfig(t, 20) // high 19 pages, low 16, protected up to 12
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	for i := range 16 {
		putPages(t, c, fmt.Sprintf("k%02d", i), testPS, 0, 1)
	}
	// k00..k02 are read: they move to the protected segment. k03..k05 were
	// only refreshed by a second Put: still on probation, but more recent.
	for i := range 3 {
		checkRead(t, c, fmt.Sprintf("k%02d", i), testPS, 0, 10)
	}
	for i := 3; i < 6; i++ {
		putPages(t, c, fmt.Sprintf("k%02d", i), testPS, 0, 1)
	}
	// A scan of blocks read once must not flush them.
	for i := 16; i < 60; i++ {
		putPages(t, c, fmt.Sprintf("k%02d", i), testPS, 0, 1)
	}
	for i := range 3 {
		if !cached(c, fmt.Sprintf("k%02d", i), 0, 1) {
			t.Errorf("k%02d, read after caching, was evicted by a scan", i)
		}
	}
	// Among the probation blocks, least recent went first.
	var order []int
	for i := 3; i < 60; i++ {
		if cached(c, fmt.Sprintf("k%02d", i), 0, 1) {
			order = append(order, i)
		}
	}
	for k := 1; k < len(order); k++ {
		if order[k] != order[k-1]+1 {
			t.Fatalf("cached blocks %v are not the most recent ones", order)
		}
	}
	if len(order) == 0 || order[len(order)-1] != 59 {
		t.Fatalf("cached blocks %v", order)
	}
}

func TestProtectedSegmentIsBounded(t *testing.T) {
	cfg := testConfig(t, 20)
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	// Everything read at once: the protected segment cannot take it all,
	// so new blocks still find room and the least recently read go first.
	for i := range 40 {
		key := fmt.Sprintf("k%02d", i)
		putPages(t, c, key, testPS, 0, 1)
		checkRead(t, c, key, testPS, 0, 1)
	}
	d := c.dirs[0]
	c.mu.Lock()
	prot := d.mu.segBytes[protected]
	c.mu.Unlock()
	if prot > d.protMax {
		t.Fatalf("protected segment holds %d bytes, more than its %d", prot, d.protMax)
	}
	if !cached(c, "k39", 0, 1) || cached(c, "k00", 0, 1) {
		t.Fatal("eviction did not follow recency")
	}
}

func TestHandleSurvivesEviction(t *testing.T) {
	cfg := testConfig(t, 20)
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	defer c.Close()
	const size = 3*testPS + 10
	putPages(t, c, "held", size, 0, 4)
	h, err := c.Acquire("held", 0, size)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	for i := range 40 { // read, so that they push held out of protected too
		putPages(t, c, fmt.Sprintf("k%02d", i), 2*testPS, 0, 2)
		checkRead(t, c, fmt.Sprintf("k%02d", i), 2*testPS, 0, 1)
	}
	if cached(c, "held", 0, 1) {
		t.Fatal("held was not evicted")
	}
	// Cached again while the old file is held: a new incarnation, a new file.
	putPages(t, c, "held", size, 0, 1)
	want := blockBytes("held", size)
	for i := range h.CRCs {
		got, err := h.ReadChunk(i, nil)
		off, n := h.ChunkSpan(i)
		if err != nil || string(got) != string(want[off:off+n]) {
			t.Fatalf("page %d through a handle on an evicted block: %v", i, err)
		}
	}
}

func TestPutLargerThanTheCacheIsFull(t *testing.T) {
	c := mustOpen(t, testConfig(t, 10))
	defer c.Close()
	putPages(t, c, "small", testPS, 0, 1)
	err := c.Put("big", 0, make([]byte, 20*testPS))
	wantErr(t, "Put of 20 pages into 10", err, ErrFull)
	if s := c.Stats(); s.Blocks != 0 || s.Used != 0 {
		t.Fatalf("stats after a failed Put: %+v", s) // "small" was evicted trying
	}
	putPages(t, c, "small", testPS, 0, 1)
	checkRead(t, c, "small", testPS, 0, testPS)
}
