package pebblekv

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratafs/strata/internal/kv"
)

// Stats tells what the store did: pebble's flushes and compactions, its
// disk and block cache, and the hot cache's hits and misses.
func TestStats(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	defer s.Close()
	for round := range 3 {
		ov := kv.NewOverlay(s.Writer())
		for i := range 200 {
			ov.Set(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "v%d-%d", round, i))
		}
		if err := s.Commit(ov, false); err != nil {
			t.Fatal(err)
		}
		if err := s.DB().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB().Compact(context.Background(), []byte("k"), []byte("l"), true); err != nil {
		t.Fatal(err)
	}
	read := func(key string) {
		if err := s.View(func(r kv.Reader) error { _, _, err := r.Get([]byte(key)); return err }); err != nil {
			t.Fatal(err)
		}
	}
	read("k00001") // cached by the commit: a hit
	read("x")      // neither cached nor stored: a miss, then cached missing
	read("x")
	st := s.Stats()
	if st.Flushes < 3 || st.Compactions < 1 || st.DiskBytes == 0 {
		t.Errorf("pebble: %d flushes, %d compactions, %d bytes on disk", st.Flushes, st.Compactions, st.DiskBytes)
	}
	if st.HotHits < 2 || st.HotMisses < 1 || st.HotBytes == 0 {
		t.Errorf("hot cache: %d hits, %d misses, %d bytes", st.HotHits, st.HotMisses, st.HotBytes)
	}
	if st.BlockCacheHits+st.BlockCacheMisses == 0 {
		t.Errorf("the block cache saw no lookup")
	}
}
