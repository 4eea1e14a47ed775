package cache

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// fillVaried caches n blocks with varied pages: some whole, some with
// holes, some with their short last page.
func fillVaried(t *testing.T, c *Cache, n int) {
	t.Helper()
	for i := range n {
		key := fmt.Sprintf("blk-%04d", i)
		size := int64(1+i%5)*testPS + int64(i%3)*100
		switch i % 4 {
		case 0:
			putPages(t, c, key, size, 0, 6)
		case 1:
			putPages(t, c, key, size, 1, 2)
		case 2:
			putPages(t, c, key, size, 0, 1)
			putPages(t, c, key, size, int64(i%5), 6)
		case 3:
			putPages(t, c, key, size, 0, 6)
			c.Invalidate(key, 0, 1)
		}
	}
}

// snapshot is what a restart must preserve.
func snapshot(c *Cache, n int) (Stats, map[string][]Range) {
	s := c.Stats()
	s.Hits, s.Misses, s.Evictions, s.EvictedBytes, s.Corruptions, s.Filled = 0, 0, 0, 0, 0, 0 // the counters of a run
	missing := map[string][]Range{}
	for i := range n {
		key := fmt.Sprintf("blk-%04d", i)
		missing[key] = c.Missing(key, 0, 6*testPS)
	}
	return s, missing
}

func twoDirConfig(t *testing.T) Config {
	return Config{PageSize: testPS, NoSync: true, Dirs: []Dir{
		{Path: t.TempDir(), Capacity: 1000 * testPS},
		{Path: t.TempDir(), Capacity: 500 * testPS},
	}}
}

func TestRestartRebuildsTheIndex(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			cfg := twoDirConfig(t)
			c := mustOpen(t, cfg)
			fillVaried(t, c, 120)
			stats, missing := snapshot(c, 120)
			lastGen := c.testBlock("blk-0119").gen
			if !crash {
				c.Close() // else: as after kill -9, the files are as the Puts left them
			}
			c2 := mustOpen(t, cfg)
			defer c2.Close()
			stats2, missing2 := snapshot(c2, 120)
			if stats2 != stats {
				t.Fatalf("stats after restart %+v, before %+v", stats2, stats)
			}
			for key, m := range missing {
				if !slices.Equal(missing2[key], m) {
					t.Fatalf("%s: missing %v after restart, %v before", key, missing2[key], m)
				}
			}
			for i := range 120 {
				key := fmt.Sprintf("blk-%04d", i)
				size := int64(1+i%5)*testPS + int64(i%3)*100
				for p := int64(0); p*testPS < size; p++ {
					if cached(c2, key, p*testPS, 1) {
						checkRead(t, c2, key, size, p*testPS, min(testPS, size-p*testPS))
					}
				}
			}
			// New incarnations get gens above every one on disk.
			c2.Drop("blk-0000")
			putPages(t, c2, "blk-0000", testPS, 0, 1)
			if g := c2.testBlock("blk-0000").gen; g <= lastGen {
				t.Fatalf("new gen %d reuses an old one", g)
			}
		})
	}
}

func TestRestartTornSidecar(t *testing.T) {
	for name, tear := range map[string]func(path string, size int64) error{
		"garbage": func(path string, _ int64) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("\x01garbage after a crash"))
			return err
		},
		"half record": func(path string, size int64) error { return os.Truncate(path, size-int64(recordLen(testPS, testPS)/2)) },
		"zeros":       func(path string, size int64) error { return os.Truncate(path, size+4096) },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t, 100)
			c := mustOpen(t, cfg)
			putPages(t, c, "b", 4*testPS, 0, 2)
			putPages(t, c, "b", 4*testPS, 2, 3) // the record a tear may cut
			meta := c.testBlock("b").metaPath()
			c.Close()
			fi, err := os.Stat(meta)
			if err != nil {
				t.Fatal(err)
			}
			if err := tear(meta, fi.Size()); err != nil {
				t.Fatal(err)
			}
			c = mustOpen(t, cfg)
			want := []Range{{3 * testPS, testPS}}
			if name == "half record" {
				want = []Range{{2 * testPS, 2 * testPS}}
			}
			if got := c.Missing("b", 0, 4*testPS); !slices.Equal(got, want) {
				t.Fatalf("Missing after a torn sidecar = %v, want %v", got, want)
			}
			// The sidecar was rewritten, so appends after it are read back.
			putPages(t, c, "b", 4*testPS, 0, 4)
			c.Close()
			c = mustOpen(t, cfg)
			defer c.Close()
			checkRead(t, c, "b", 4*testPS, 0, 4*testPS)
		})
	}
}

func TestRestartRemovesStrayFiles(t *testing.T) {
	cfg := testConfig(t, 100)
	c := mustOpen(t, cfg)
	putPages(t, c, "b", 2*testPS, 0, 2)
	b := c.testBlock("b")
	c.Close()
	dir := filepath.Dir(b.dataPath())
	copyFile(t, b.dataPath(), filepath.Join(dir, "b.0000000000000000.data")) // an older incarnation
	copyFile(t, b.metaPath(), filepath.Join(dir, "b.0000000000000000.meta"))
	strays := []string{
		filepath.Join(dir, "b.00000000000000ff.data"),     // no sidecar
		filepath.Join(dir, "b.00000000000000fe.meta"),     // no data
		filepath.Join(dir, "b.0000000000000001.meta.tmp"), // an unfinished rewrite
		filepath.Join(dir, "b.0000000000000000.meta") + ".tmp",
	}
	for _, p := range strays {
		writeFile(t, p, "x")
	}
	foreign := filepath.Join(dir, "README")
	writeFile(t, foreign, "not ours")
	c = mustOpen(t, cfg)
	defer c.Close()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	want := []string{"README", filepath.Base(b.dataPath()), filepath.Base(b.metaPath())}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files after Open: %v, want %v", got, want)
	}
	checkRead(t, c, "b", 2*testPS, 0, 2*testPS)
	if g := c.mu.nextGen; g <= 0xff {
		t.Fatalf("next gen %d does not pass the gens found on disk", g)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b))
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRestartWithAnotherPageSizeDiscards(t *testing.T) {
	cfg := testConfig(t, 100)
	c := mustOpen(t, cfg)
	putPages(t, c, "b", 2*testPS, 0, 2)
	c.Close()
	cfg.PageSize = 2 * testPS
	c = mustOpen(t, cfg)
	defer c.Close()
	if s := c.Stats(); s.Blocks != 0 || cached(c, "b", 0, 1) {
		t.Fatalf("blocks of another page size survived: %+v", s)
	}
}

func TestRestartOrdersByAgeAndHonoursASmallerCapacity(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	cfg := testConfig(t, 100)
	cfg.Clock, cfg.NoSync = clock.now, true
	c := mustOpen(t, cfg)
	// Cached in an order unlike their keys.
	for _, i := range []int{5, 2, 8, 0, 9, 1, 7, 3, 6, 4} {
		putPages(t, c, fmt.Sprintf("k%d", i), 5*testPS, 0, 5)
		clock.advance()
	}
	c.Close()
	cfg.Dirs[0].Capacity = 30 * testPS // high 28 pages: evicts down to 24
	c = mustOpen(t, cfg)
	defer c.Close()
	var got []int
	for i := range 10 {
		if cached(c, fmt.Sprintf("k%d", i), 0, 1) {
			got = append(got, i)
		}
	}
	if want := []int{3, 4, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("after shrinking, cached %v, want the newest %v", got, want)
	}
	if s := c.Stats(); s.Used != 20*testPS || s.Evictions != 6 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSidecarIsCompacted(t *testing.T) {
	cfg := testConfig(t, 100)
	cfg.NoSync = true
	c := mustOpen(t, cfg)
	putPages(t, c, "b", 2*testPS, 0, 2)
	for range 100 {
		c.Invalidate("b", testPS, 1)
		putPages(t, c, "b", 2*testPS, 1, 2)
	}
	b := c.testBlock("b")
	b.persist.Lock()
	records, size := b.persist.records, b.persist.metaLen
	b.persist.Unlock()
	if records > 2*2+compactSlack+2 {
		t.Fatalf("sidecar holds %d records for 2 pages", records)
	}
	if fi, err := os.Stat(b.metaPath()); err != nil || fi.Size() != size {
		t.Fatalf("sidecar is %v bytes, expected %d (%v)", fi.Size(), size, err)
	}
	c.Close()
	c = mustOpen(t, cfg)
	defer c.Close()
	checkRead(t, c, "b", 2*testPS, 0, 2*testPS)
}

// A machine crash can lose data a disk acknowledged, or the sidecar can
// outrun the data with NoSync: the claim survives Open (which reads no
// data), and the first read catches it.
func TestClaimWithoutDataIsCaughtOnRead(t *testing.T) {
	cfg := testConfig(t, 100)
	c := mustOpen(t, cfg)
	putPages(t, c, "b", 3*testPS, 0, 3)
	data := c.testBlock("b").dataPath()
	c.Close()
	if err := os.Truncate(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(data, 3*testPS); err != nil { // a hole: zeros
		t.Fatal(err)
	}
	c = mustOpen(t, cfg)
	defer c.Close()
	if !cached(c, "b", 0, 3*testPS) {
		t.Fatal("the claims did not survive Open")
	}
	_, err := c.ReadAt("b", make([]byte, 10), testPS)
	wantErr(t, "ReadAt of a page whose data was lost", err, ErrCorrupt)
	putPages(t, c, "b", 3*testPS, 1, 2)
	checkRead(t, c, "b", 3*testPS, testPS, testPS)
}
