package blocks

import (
	"testing"
)

func TestObjectKeyRoundTrip(t *testing.T) {
	k := ObjectKey(0x2a, 0xdeadbeef)
	if k != "blocks/000000000000002a/00000000deadbeef" {
		t.Fatalf("key %q", k)
	}
	if b, ok := ParseObjectKey(0x2a, k); !ok || b != 0xdeadbeef {
		t.Fatalf("parse: %x %v", b, ok)
	}
	for _, bad := range []string{"blocks/000000000000002b/00000000deadbeef", "blocks/000000000000002a/xyz", k + "/x", "other"} {
		if _, ok := ParseObjectKey(0x2a, bad); ok {
			t.Errorf("parsed %q", bad)
		}
	}
}

// Losing a worker moves only the blocks it was home to, and the load spreads.
func TestRankIsStableAndSpread(t *testing.T) {
	workers := []string{"w1", "w2", "w3", "w4"}
	home := map[string]int{}
	moved := 0
	const n = 4000
	for b := uint64(1); b <= n; b++ {
		order := Rank(workers, 7, b)
		h := workers[order[0]]
		home[h]++
		without := Rank(workers[:3], 7, b)
		if h != "w4" && workers[without[0]] != h {
			moved++
		}
		if h == "w4" && workers[without[0]] != workers[order[1]] {
			t.Fatalf("block %d: fallback %s is not the runner-up %s", b, workers[without[0]], workers[order[1]])
		}
	}
	if moved != 0 {
		t.Fatalf("%d blocks moved between surviving workers", moved)
	}
	for _, w := range workers {
		if home[w] < n/4*8/10 {
			t.Fatalf("uneven placement: %v", home)
		}
	}
}
