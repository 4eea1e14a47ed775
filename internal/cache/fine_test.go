package cache

import (
	"errors"
	"io"
	"slices"
	"testing"
)

// fineConfig has pages of 4 pages of testPS, fine pages and chunks of testPS.
func fineConfig(t *testing.T) Config {
	return Config{Dirs: []Dir{{Path: t.TempDir(), Capacity: 400 * testPS}}, PageSize: 4 * testPS,
		ChunkSize: testPS, FinePageSize: testPS, NoSync: true}
}

// TestFillFineCachesExactly: a block a scattered reader fills has pages of
// FinePageSize, so that what is cached is what was fetched, rounded to
// that size (no whole page around it), and the index says exactly that;
// the sidecar keeps the page size over a restart.
func TestFillFineCachesExactly(t *testing.T) {
	cfg := fineConfig(t)
	c := mustOpen(t, cfg)
	const size = 20*testPS + 100
	data := blockBytes("fine", size)
	if got, want := c.MissingFine("fine", 5*testPS+10, 2*testPS), []Range{{5 * testPS, 3 * testPS}}; !slices.Equal(got, want) {
		t.Fatalf("MissingFine of an uncached block: %v, want %v", got, want)
	}
	if got, want := c.Missing("fine", 5*testPS+10, 2*testPS), []Range{{4 * testPS, 4 * testPS}}; !slices.Equal(got, want) {
		t.Fatalf("Missing of an uncached block: %v, want %v (whole pages)", got, want)
	}
	if err := c.FillFine("fine", 5*testPS, data[5*testPS:8*testPS], nil); err != nil {
		t.Fatal(err)
	}
	if err := c.FillFine("fine", 20*testPS, data[20*testPS:], nil); err != nil { // the short last page
		t.Fatal(err)
	}
	checkFine := func(c *Cache) {
		t.Helper()
		checkRead(t, c, "fine", size, 5*testPS+10, 3*testPS-10)
		checkRead(t, c, "fine", size, 20*testPS+5, 200) // past the end: io.EOF
		want := []Range{{0, 5 * testPS}, {8 * testPS, 12 * testPS}}
		if got := c.Missing("fine", 0, size); !slices.Equal(got, want) {
			t.Fatalf("Missing after fills: %v, want %v", got, want)
		}
		if got := c.MissingFine("fine", 0, size); !slices.Equal(got, want) {
			t.Fatalf("MissingFine after fills: %v, want %v", got, want)
		}
		if st := c.Stats(); st.Used != 3*testPS+100 || st.Pages != 4 {
			t.Fatalf("stats %+v: want 3 fine pages and the 100-byte last one", st)
		}
		h, err := c.Acquire("fine", 6*testPS, 10)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Release()
		if h.PageSize != testPS || h.FirstPage != 6*testPS || h.Length != testPS {
			t.Fatalf("handle %+v: want the one fine page", h)
		}
		if _, err := h.ReadChunk(0, nil); err != nil {
			t.Fatal(err)
		}
	}
	checkFine(c)
	// A sequential reader's whole pages go into the fine block as fine pages.
	if err := c.Put("fine", 8*testPS, data[8*testPS:12*testPS]); err != nil {
		t.Fatal(err)
	}
	checkRead(t, c, "fine", size, 5*testPS, 7*testPS)
	c.Invalidate("fine", 8*testPS, 4*testPS)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	checkFine(mustOpen(t, cfg))
}

// TestFillFineIntoWholePages: a block cached with whole pages keeps them;
// a fine fill not aligned on them is refused, and one aligned is stored in
// whole pages.
func TestFillFineIntoWholePages(t *testing.T) {
	c := mustOpen(t, fineConfig(t))
	const size = 16 * testPS
	data := blockBytes("whole", size)
	if err := c.Put("whole", 0, data[:4*testPS]); err != nil {
		t.Fatal(err)
	}
	if got, want := c.MissingFine("whole", 5*testPS, 10), []Range{{4 * testPS, 4 * testPS}}; !slices.Equal(got, want) {
		t.Fatalf("MissingFine of a block of whole pages: %v, want %v", got, want)
	}
	if err := c.FillFine("whole", 5*testPS, data[5*testPS:6*testPS], nil); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("a fine fill into whole pages: %v, want ErrInvalidRange", err)
	}
	if err := c.FillFine("whole", 4*testPS, data[4*testPS:8*testPS], nil); err != nil {
		t.Fatal(err)
	}
	checkRead(t, c, "whole", size, 0, 8*testPS)
	if _, err := c.ReadAt("whole", make([]byte, 1), 8*testPS); !errors.Is(err, ErrMiss) && !errors.Is(err, io.EOF) {
		t.Fatalf("past what was put: %v, want a miss", err)
	}
}

func TestFinePageSizeConfig(t *testing.T) {
	for _, fine := range []int64{3 * testPS, 8 * testPS, testPS / 2, 6 * testPS} {
		cfg := fineConfig(t)
		cfg.FinePageSize = fine
		if _, err := Open(cfg); err == nil {
			t.Errorf("FinePageSize %d with pages of %d and chunks of %d: opened", fine, cfg.PageSize, cfg.ChunkSize)
		}
	}
}
