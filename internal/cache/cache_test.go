package cache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestPutReadAt(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	const size = 3*testPS + 1000 // a short last page
	data := blockBytes("b1", size)
	mustPut(t, c, "b1", data, 0)
	for _, r := range [][2]int64{
		{0, 1}, {0, size}, {10, 100}, {testPS - 1, 2}, {testPS, testPS}, {5, 3 * testPS},
		{3 * testPS, 1000}, {size - 1, 1}, {size - 10, 100}, {2 * testPS, 4 * testPS},
	} {
		checkRead(t, c, "b1", size, r[0], r[1])
	}
	n, err := c.ReadAt("b1", make([]byte, 10), size)
	if n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end: %d, %v; want 0, EOF", n, err)
	}
	n, err = c.ReadAt("b1", make([]byte, 10), 7*testPS)
	if n != 0 || err != io.EOF {
		t.Fatalf("ReadAt past the end: %d, %v; want 0, EOF", n, err)
	}
	s := c.Stats()
	if s.Blocks != 1 || s.Pages != 4 || s.Used != size || s.Capacity != 100*testPS {
		t.Fatalf("stats %+v", s)
	}
	if s.Hits != 12 || s.Misses != 0 {
		t.Fatalf("hits %d misses %d, want 12, 0", s.Hits, s.Misses)
	}
}

func TestReadAtMissReturnsNothing(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	putPages(t, c, "b", 8*testPS, 0, 2)
	putPages(t, c, "b", 8*testPS, 3, 4)
	p := make([]byte, 4*testPS)
	n, err := c.ReadAt("b", p, 0)
	if n != 0 || !errors.Is(err, ErrMiss) {
		t.Fatalf("ReadAt across a hole: %d, %v", n, err)
	}
	_, err = c.ReadAt("nope", p, 0)
	wantErr(t, "ReadAt of an unknown block", err, ErrMiss)
	checkRead(t, c, "b", 8*testPS, 100, 2*testPS-100)
	checkRead(t, c, "b", 8*testPS, 3*testPS, testPS)
	if s := c.Stats(); s.Hits != 2 || s.Misses != 2 {
		t.Fatalf("hits %d misses %d, want 2, 2", s.Hits, s.Misses)
	}
}

func TestMissing(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	const ps = testPS
	putPages(t, c, "b", 8*ps, 0, 1)
	putPages(t, c, "b", 8*ps, 2, 4)
	for _, tc := range []struct {
		key    string
		off, n int64
		want   []Range
	}{
		{"b", 0, 8 * ps, []Range{{ps, ps}, {4 * ps, 4 * ps}}},
		{"b", 10, 10, nil},
		{"b", ps + 10, 10, []Range{{ps, ps}}},
		{"b", 2 * ps, 2 * ps, nil},
		{"b", 3*ps + 1, 100 * ps, []Range{{4 * ps, 100 * ps}}},
		{"x", 5, ps, []Range{{0, 2 * ps}}},
		{"BAD", 0, 1, []Range{{0, ps}}},
		{"b", 0, 0, nil},
	} {
		if got := c.Missing(tc.key, tc.off, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Missing(%s, %d, %d) = %v, want %v", tc.key, tc.off, tc.n, got, tc.want)
		}
	}
	// Once the short last page is cached, the block's end is known.
	putPages(t, c, "c", 3*ps+5, 3, 4)
	if got, want := c.Missing("c", 0, 100*ps), []Range{{0, 3 * ps}}; !slices.Equal(got, want) {
		t.Errorf("Missing past a known end = %v, want %v", got, want)
	}
}

func TestPutValidates(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	for _, key := range []string{"", "A", "a.b", "a/b", "..", "é", strings.Repeat("a", 129)} {
		wantErr(t, fmt.Sprintf("Put(%q)", key), c.Put(key, 0, []byte{1}), ErrInvalidKey)
		_, err := c.ReadAt(key, make([]byte, 1), 0)
		wantErr(t, fmt.Sprintf("ReadAt(%q)", key), err, ErrInvalidKey)
	}
	if err := c.Put(strings.Repeat("z", 128)+"", 0, []byte{1}); err != nil {
		t.Fatalf("Put with a 128-byte key: %v", err)
	}
	wantErr(t, "unaligned Put", c.Put("k", 100, []byte{1}), ErrInvalidRange)
	wantErr(t, "negative Put", c.Put("k", -testPS, []byte{1}), ErrInvalidRange)
	_, err := c.ReadAt("k", make([]byte, 1), -1)
	wantErr(t, "negative ReadAt", err, ErrInvalidRange)
	// The block's last page is short: nothing may follow it, and no short
	// page may come before cached pages.
	putPages(t, c, "s", 2*testPS+10, 2, 3)
	wantErr(t, "Put after the end", c.Put("s", 3*testPS, make([]byte, testPS)), ErrInvalidRange)
	wantErr(t, "short page before the end", c.Put("s", 0, make([]byte, 10)), ErrInvalidRange)
	wantErr(t, "page of another length", c.Put("s", 2*testPS, make([]byte, 11)), ErrInvalidRange)
	putPages(t, c, "s", 2*testPS+10, 0, 3)
	checkRead(t, c, "s", 2*testPS+10, 0, 3*testPS)
	if err := c.Put("s", 0, nil); err != nil {
		t.Fatalf("empty Put: %v", err)
	}
}

func TestPutIsIdempotent(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	data := blockBytes("b", 5*testPS)
	mustPut(t, c, "b", data, 0)
	before := c.Stats()
	mustPut(t, c, "b", data, 0)
	mustPut(t, c, "b", data, 2*testPS)
	if after := c.Stats(); after != before {
		t.Fatalf("stats changed by repeated Puts: %+v → %+v", before, after)
	}
	checkRead(t, c, "b", 5*testPS, 0, 5*testPS)
}

func TestConcurrentPutsOfTheSamePages(t *testing.T) {
	c := mustOpen(t, testConfig(t, 1000))
	defer c.Close()
	const size = 40*testPS + 7
	data := blockBytes("b", size)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			off := int64(g%4) * 10 * testPS
			if err := c.Put("b", off, data[off:]); err != nil {
				t.Errorf("Put: %v", err)
				return
			}
			// Put returns once its pages are cached, also those another
			// Put was writing.
			p := make([]byte, size-off)
			if n, err := c.ReadAt("b", p, off); err != nil || n != len(p) {
				t.Errorf("ReadAt after Put: %d, %v", n, err)
			}
		})
	}
	wg.Wait()
	if s := c.Stats(); s.Pages != 41 || s.Used != size || s.Blocks != 1 {
		t.Fatalf("stats %+v", s)
	}
	checkRead(t, c, "b", size, 0, size)
}

func TestAcquire(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	const size = 5*testPS + 100
	data := blockBytes("b", size)
	mustPut(t, c, "b", data, testPS)
	_, err := c.Acquire("b", 0, 10)
	wantErr(t, "Acquire of an uncached page", err, ErrMiss)
	h, err := c.Acquire("b", 2*testPS+5, 3*testPS)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if h.PageSize != testPS || h.FirstPage != 2*testPS || h.Length != 3*testPS+100 || len(h.CRCs) != 4 {
		t.Fatalf("handle %+v", h)
	}
	// An external reader has only the descriptor, the offsets and the CRCs.
	for i := range h.CRCs {
		off, n := h.ChunkSpan(i)
		buf := make([]byte, n)
		if _, err := syscall.Pread(int(h.File.Fd()), buf, off); err != nil {
			t.Fatal(err)
		}
		if Checksum(buf) != h.CRCs[i] || string(buf) != string(data[off:off+n]) {
			t.Fatalf("page %d read through the descriptor is wrong", i)
		}
		if got, err := h.ReadChunk(i, nil); err != nil || string(got) != string(buf) {
			t.Fatalf("ReadChunk(%d): %v", i, err)
		}
	}
	_, err = c.Acquire("b", size, 10)
	wantErr(t, "Acquire past the end", err, io.EOF)
	h.Release()
	h.Release()
	if s := c.Stats(); s.Hits != 2 || s.Misses != 1 { // io.EOF is an answer: a hit
		t.Fatalf("hits %d misses %d", s.Hits, s.Misses)
	}
}

func TestInvalidateAndDrop(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	putPages(t, c, "a", 4*testPS, 0, 4)
	putPages(t, c, "b", 4*testPS, 0, 4)
	c.Invalidate("a", testPS+1, 1)
	if got, want := c.Missing("a", 0, 4*testPS), []Range{{testPS, testPS}}; !slices.Equal(got, want) {
		t.Fatalf("Missing after Invalidate = %v, want %v", got, want)
	}
	c.Drop("b")
	if cached(c, "b", 0, 1) {
		t.Fatal("b is cached after Drop")
	}
	if s := c.Stats(); s.Blocks != 1 || s.Pages != 3 || s.Used != 3*testPS || s.Corruptions != 1 {
		t.Fatalf("stats %+v", s)
	}
	c.Invalidate("a", 0, 4*testPS) // the last pages: the block goes
	if s := c.Stats(); s.Blocks != 0 || s.Used != 0 {
		t.Fatalf("stats %+v", s)
	}
	putPages(t, c, "a", 4*testPS, 0, 4)
	checkRead(t, c, "a", 4*testPS, 0, 4*testPS)
}

func TestClosed(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	putPages(t, c, "a", testPS, 0, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Put after Close", c.Put("a", 0, []byte{1}), ErrClosed)
	_, err := c.ReadAt("a", make([]byte, 1), 0)
	wantErr(t, "ReadAt after Close", err, ErrClosed)
	_, err = c.Acquire("a", 0, 1)
	wantErr(t, "Acquire after Close", err, ErrClosed)
	if got := c.Missing("a", 0, 1); len(got) != 1 {
		t.Fatalf("Missing after Close = %v", got)
	}
}

func TestConfigValidation(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range []Config{
		{},
		{Dirs: []Dir{{Path: dir}}},
		{Dirs: []Dir{{Path: dir, Capacity: 1}}, PageSize: 1000},
		{Dirs: []Dir{{Path: dir, Capacity: 1}}, LowWatermark: 0.9, HighWatermark: 0.5},
		{Dirs: []Dir{{Path: dir, Capacity: 1}, {Path: dir + "/", Capacity: 1}}},
	} {
		if _, err := Open(cfg); err == nil {
			t.Errorf("Open(%+v) accepted", cfg)
		}
	}
}

func TestSpreadOverDirs(t *testing.T) {
	cfg := Config{PageSize: testPS, NoSync: true, Dirs: []Dir{
		{Path: t.TempDir(), Capacity: 1000 * testPS},
		{Path: t.TempDir(), Capacity: 3000 * testPS},
	}}
	c := mustOpen(t, cfg)
	defer c.Close()
	for i := range 400 {
		putPages(t, c, fmt.Sprintf("k%d", i), testPS, 0, 1)
	}
	small, big := c.dirs[0].mu.blocks, c.dirs[1].mu.blocks
	if small+big != 400 || small < 60 || small > 140 {
		t.Fatalf("blocks per dir %d and %d, want about 100 and 300", small, big)
	}
}

func TestCloseWaitsForPuts(t *testing.T) {
	cfg := testConfig(t, 1000)
	c := mustOpen(t, cfg)
	var wg sync.WaitGroup
	var ok sync.Map
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				key := fmt.Sprintf("k%d-%d", g, i)
				err := c.Put(key, 0, blockBytes(key, 2*testPS))
				if err == nil {
					ok.Store(key, true)
				} else if !errors.Is(err, ErrClosed) {
					t.Errorf("Put: %v", err)
				}
			}
		})
	}
	c.Close()
	checkInvariants(t, c) // no write in flight once Close returns
	wg.Wait()
	c = mustOpen(t, cfg)
	defer c.Close()
	ok.Range(func(k, _ any) bool { // every acknowledged Put is on disk
		checkRead(t, c, k.(string), 2*testPS, 0, 2*testPS)
		return true
	})
}

func TestKeys(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	for _, k := range []string{"c", "a", "b"} {
		putPages(t, c, k, testPS, 0, 1)
	}
	c.Drop("b")
	if got := c.Keys(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("Keys() = %v", got)
	}
}

// PutReadable calls readable once, when every page of the data can be
// read (its own and those another Put already cached), and never for a
// Put that fails before then.
func TestPutReadable(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	data := blockBytes("k", 4*testPS)
	for _, off := range []int64{2 * testPS, 0} { // new pages, then some cached already
		calls := 0
		err := c.PutReadable("k", off, data[off:], func() {
			calls++
			got := make([]byte, len(data)-int(off))
			if _, err := c.ReadAt("k", got, off); err != nil || !bytes.Equal(got, data[off:]) {
				t.Errorf("put at %d: a read when readable was called: %v", off, err)
			}
		})
		if err != nil || calls != 1 {
			t.Fatalf("put at %d: %v, readable called %d times, want once", off, err, calls)
		}
	}
	called := false
	if err := c.PutReadable("k", 1, data, func() { called = true }); err == nil || called {
		t.Fatalf("put at an unaligned offset: %v, readable called: %v", err, called)
	}
}
