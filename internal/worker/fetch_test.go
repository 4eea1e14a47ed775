package worker

import (
	"testing"

	"github.com/stratafs/strata/internal/cache"
)

// claim waits for the ranges in flight that overlap what is missing and
// claims the rest in chunks, cut on a grid of chunks from the block's
// start and at the block's end.
func TestFetchGroupClaim(t *testing.T) {
	const mib = 1 << 20
	var g fetchGroup
	missing := func(r ...cache.Range) func() []cache.Range { return func() []cache.Range { return r } }
	_, first := g.claim("k", missing(cache.Range{Off: 0, Len: 4 * mib}, cache.Range{Off: 8 * mib, Len: 4 * mib}), 4*mib, 100*mib, false)
	if len(first) != 2 {
		t.Fatalf("first claim: %d flights, want 2", len(first))
	}
	wait, mine := g.claim("k", missing(cache.Range{Off: 2 * mib, Len: 12 * mib}), 3*mib, 13*mib, false)
	if len(wait) != 2 || wait[0] != first[0] || wait[1] != first[1] {
		t.Fatalf("second claim waits for %v, want both first flights", wait)
	}
	want := [][2]int64{{4 * mib, 6 * mib}, {6 * mib, 8 * mib}, {12 * mib, 13 * mib}}
	if len(mine) != len(want) {
		t.Fatalf("second claim: %d flights, want %d", len(mine), len(want))
	}
	for i, f := range mine {
		if f.off != want[i][0] || f.end != want[i][1] {
			t.Fatalf("flight %d is [%d, %d), want [%d, %d)", i, f.off, f.end, want[i][0], want[i][1])
		}
	}
	// Once a flight finishes, its range is claimed anew.
	g.finish("k", first[0], nil)
	if _, again := g.claim("k", missing(cache.Range{Off: 0, Len: mib}), 4*mib, 100*mib, false); len(again) != 1 {
		t.Fatalf("after the flight finished: %d flights, want 1", len(again))
	}
	if other, _ := g.claim("other", missing(cache.Range{Off: 0, Len: mib}), 4*mib, 100*mib, false); len(other) != 0 {
		t.Fatal("another block waits for this one's flights")
	}
}

// Read-ahead runs to the last multiple of the fetch chunk within its
// reach (so that its GETs are whole chunks of the grid), or to the block's
// end; a reach shorter than a chunk is taken whole.
func TestReadAheadEnd(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ start, ahead, want int64 }{
		{1 * mib, 16 * mib, 16 * mib}, {4 * mib, 16 * mib, 20 * mib}, {5 * mib, 16 * mib, 20 * mib},
		{50 * mib, 16 * mib, 64 * mib}, {63 * mib, 16 * mib, 64 * mib}, {1 * mib, 2 * mib, 3 * mib},
	} {
		if got := readAheadEnd(c.start, c.ahead, 4*mib, 64*mib); got != c.want {
			t.Errorf("read-ahead of %d MiB from %d MiB ends at %d MiB, want %d", c.ahead/mib, c.start/mib, got/mib, c.want/mib)
		}
	}
}
