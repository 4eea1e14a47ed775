package pebblekv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/kvtest"
)

// storeTxn adapts a Store to kv.Txn by committing every write at once, so the
// conformance suite exercises pebble reads, the cache and scans together.
type storeTxn struct {
	t *testing.T
	s *Store
}

func (st storeTxn) Get(k []byte) ([]byte, bool, error) { return st.s.Writer().Get(k) }
func (st storeTxn) Scan(a, b []byte, fn func(k, v []byte) bool) error {
	return st.s.View(func(r kv.Reader) error { return r.Scan(a, b, fn) })
}
func (st storeTxn) Set(k, v []byte) { st.commit(func(o *kv.Overlay) { o.Set(k, v) }) }
func (st storeTxn) Delete(k []byte) { st.commit(func(o *kv.Overlay) { o.Delete(k) }) }
func (st storeTxn) commit(fn func(*kv.Overlay)) {
	ov := kv.NewOverlay(st.s.Writer())
	fn(ov)
	if err := st.s.Commit(ov, false); err != nil {
		st.t.Fatal(err)
	}
}

func open(t *testing.T, dir string, hot int64) *Store {
	t.Helper()
	s, err := Open(dir, Options{BlockCacheBytes: 1 << 20, HotBytes: hot})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	for _, hot := range []int64{0, 4 << 10, 1 << 20} {
		t.Run(fmt.Sprintf("hot=%d", hot), func(t *testing.T) {
			kvtest.Run(t, func(t *testing.T) kv.Txn {
				s := open(t, t.TempDir(), hot)
				t.Cleanup(func() { s.Close() })
				return storeTxn{t, s}
			})
		})
	}
}

func TestSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<20)
	ov := kv.NewOverlay(s.Writer())
	ov.Set([]byte("a"), []byte("1"))
	ov.Set([]byte("b"), []byte("2"))
	if err := s.Commit(ov, true); err != nil {
		t.Fatal(err)
	}
	ov = kv.NewOverlay(s.Writer())
	ov.Delete([]byte("a"))
	if err := s.Commit(ov, true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, 1<<20)
	defer s.Close()
	if _, ok, _ := s.Writer().Get([]byte("a")); ok {
		t.Fatal("deleted key came back")
	}
	if v, ok, _ := s.Writer().Get([]byte("b")); !ok || string(v) != "2" {
		t.Fatalf("b = %q, %v", v, ok)
	}
}

func TestHotCacheStaysBounded(t *testing.T) {
	c := newHotCache(hotShards * 1024)
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100) }
	const n = 10000
	for i := range n {
		c.add([]byte(fmt.Sprint("key", i)), value(i), false)
	}
	for i := range c.shards {
		s := &c.shards[i]
		if most := 2 * len(s.ring) / (hotHeader + len("key0000") + 100); len(s.index) > most {
			t.Fatalf("shard %d indexes %d entries; %d bytes hold at most %d", i, len(s.index), len(s.ring), most/2)
		}
	}
	if v, ok, cached := c.get([]byte(fmt.Sprint("key", n-1))); !cached || !ok || !bytes.Equal(v, value(n-1)) {
		t.Fatalf("the last key: %v %v %v", v, ok, cached)
	}
	if _, _, cached := c.get([]byte("key0")); cached {
		t.Fatal("the first key outlived 10,000 others in 32 KiB")
	}
}

// What is read stays while the ring turns; a miss and an empty value are
// told apart; an update replaces.
func TestHotCacheKeepsWhatIsRead(t *testing.T) {
	c := newHotCache(hotShards * 4096)
	c.add([]byte("hot"), []byte("v1"), false)
	c.add([]byte("hot"), []byte("v2"), false)
	c.add([]byte("gone"), nil, true)
	c.add([]byte("empty"), nil, false)
	for i := range 20000 {
		c.add([]byte(fmt.Sprint("cold", i)), make([]byte, 50), false)
		if i%100 == 0 {
			if v, ok, cached := c.get([]byte("hot")); !cached || !ok || string(v) != "v2" {
				t.Fatalf("after %d others, hot = %q %v %v", i, v, ok, cached)
			}
			if _, ok, cached := c.get([]byte("gone")); !cached || ok {
				t.Fatalf("after %d others, the miss: %v %v", i, ok, cached)
			}
			if v, ok, cached := c.get([]byte("empty")); !cached || !ok || len(v) != 0 {
				t.Fatalf("after %d others, the empty value: %q %v %v", i, v, ok, cached)
			}
		}
	}
	if _, _, cached := c.get([]byte("cold0")); cached {
		t.Fatal("an entry never read outlived the ring")
	}
	// A growing ring keeps what it held: 5,000 values of 1 KiB outgrow
	// the first rings, not the limit.
	c = newHotCache(hotShards * 16 * hotFirstRing)
	value := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1024) }
	for i := range 5000 {
		c.add([]byte(fmt.Sprint("k", i)), value(i), false)
	}
	for i := range 5000 {
		if v, ok, cached := c.get([]byte(fmt.Sprint("k", i))); !cached || !ok || !bytes.Equal(v, value(i)) {
			t.Fatalf("k%d after the rings grew: %d bytes, %v %v", i, len(v), ok, cached)
		}
	}
	big := bytes.Repeat([]byte("b"), 3*hotFirstRing) // larger than a young ring
	c = newHotCache(hotShards * 16 * hotFirstRing)
	c.add([]byte("small"), []byte("s"), false)
	c.add([]byte("big"), big, false)
	if v, ok, cached := c.get([]byte("big")); !cached || !ok || !bytes.Equal(v, big) {
		t.Fatalf("a large value: %d bytes, %v %v", len(v), ok, cached)
	}
}

// An empty value is a value: it must not be taken for a delete on its way
// through the overlay, the batch or the cache.
func TestEmptyValueIsNotADelete(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, 1<<20)
	ov := kv.NewOverlay(s.Writer())
	ov.Set([]byte("marker"), nil)
	if err := s.Commit(ov, true); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Writer().Get([]byte("marker")); !ok {
		t.Fatal("empty value lost before reopen")
	}
	s.Close()
	s = open(t, dir, 1<<20)
	defer s.Close()
	n := 0
	if err := s.Writer().Scan([]byte("m"), []byte("n"), func(k, v []byte) bool { n++; return true }); err != nil || n != 1 {
		t.Fatalf("empty value lost after reopen: %d keys, %v", n, err)
	}
}

// A key read while missing, then written, then deleted, reads right at every
// step: negative entries, which readers cache (the writer does not), are
// kept exact by commits.
func TestMissingKeysAreCachedExactly(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	defer s.Close()
	get := func() (ok bool) {
		err := s.View(func(r kv.Reader) (err error) {
			_, ok, err = r.Get([]byte("k"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	commit := func(fn func(*kv.Overlay)) {
		ov := kv.NewOverlay(s.Writer())
		fn(ov)
		if err := s.Commit(ov, false); err != nil {
			t.Fatal(err)
		}
	}
	// Twice: from pebble, then from the cached miss.
	if fromPebble, fromCache := get(), get(); fromPebble || fromCache {
		t.Fatal("a missing key exists")
	}
	if _, _, cached := s.cache.get([]byte("k")); !cached {
		t.Fatal("a reader's miss was not cached")
	}
	commit(func(o *kv.Overlay) { o.Set([]byte("k"), []byte("v")) })
	if !get() {
		t.Fatal("a written key is missing")
	}
	commit(func(o *kv.Overlay) { o.Delete([]byte("k")) })
	if get() {
		t.Fatal("a deleted key exists")
	}
	if _, ok, _ := s.Writer().Get([]byte("w")); ok {
		t.Fatal("a missing key exists")
	}
	if _, _, cached := s.cache.get([]byte("w")); cached {
		t.Fatal("the writer's miss was cached")
	}
}

// Without write-through, a commit adds nothing to the hot cache but keeps
// what it holds exact: a key cached before, present or missing, reads what
// was written; a key not cached stays uncached and reads from pebble.
func TestCommitsWithoutWriteThroughRefreshOnly(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	defer s.Close()
	storeTxn{t, s}.Set([]byte("cached"), []byte("v1"))
	read := func(key string) (string, bool) {
		var v []byte
		var ok bool
		err := s.View(func(r kv.Reader) (err error) {
			v, ok, err = r.Get([]byte(key))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(v), ok
	}
	read("missing") // cached as missing by a reader
	s.SetWriteThrough(false)
	storeTxn{t, s}.Set([]byte("cached"), []byte("v2"))
	storeTxn{t, s}.Set([]byte("missing"), []byte("now here"))
	storeTxn{t, s}.Set([]byte("new"), []byte("n"))
	for key, want := range map[string]string{"cached": "v2", "missing": "now here"} {
		if v, ok, cached := s.cache.get([]byte(key)); !cached || !ok || string(v) != want {
			t.Errorf("%s in the cache: %q %v %v, want %q", key, v, ok, cached, want)
		}
	}
	if _, _, cached := s.cache.get([]byte("new")); cached {
		t.Error("a new key was added to the cache without write-through")
	}
	if v, ok := read("new"); !ok || v != "n" {
		t.Errorf("new reads %q %v", v, ok)
	}
	s.SetWriteThrough(true)
	storeTxn{t, s}.Set([]byte("later"), []byte("l"))
	if _, _, cached := s.cache.get([]byte("later")); !cached {
		t.Error("write-through on again: a new key was not cached")
	}
}

func TestCheckpointReplacesAnotherStore(t *testing.T) {
	root := t.TempDir()
	src, dst := open(t, root+"/src", 1<<20), open(t, root+"/dst", 1<<20)
	defer src.Close()
	storeTxn{t, src}.Set([]byte("k"), []byte("from src"))
	storeTxn{t, dst}.Set([]byte("k"), []byte("from dst"))
	storeTxn{t, dst}.Set([]byte("only-dst"), []byte("x"))
	if v, _, _ := dst.Writer().Get([]byte("k")); string(v) != "from dst" { // warm the hot cache
		t.Fatalf("dst has %q", v)
	}
	if err := src.Checkpoint(root + "/cp"); err != nil {
		t.Fatal(err)
	}
	if err := dst.Replace(root + "/cp"); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := dst.Writer().Get([]byte("k")); !ok || string(v) != "from src" {
		t.Fatalf("after replace k = %q, %v", v, ok)
	}
	if _, ok, _ := dst.Writer().Get([]byte("only-dst")); ok {
		t.Fatal("a key of the replaced database survived")
	}
	dst.Close()
	dst = open(t, root+"/dst", 1<<20)
	defer dst.Close()
	if v, _, _ := dst.Writer().Get([]byte("k")); string(v) != "from src" {
		t.Fatalf("after reopen k = %q", v)
	}
}

// A crash between Replace's two renames leaves dir missing and dir.old
// whole: Open brings the old database back.
func TestOpenUndoesAnInterruptedReplace(t *testing.T) {
	root := t.TempDir()
	s := open(t, root+"/db", 1<<20)
	storeTxn{t, s}.Set([]byte("k"), []byte("v"))
	s.Close()
	if err := os.Rename(root+"/db", root+"/db.old"); err != nil {
		t.Fatal(err)
	}
	s = open(t, root+"/db", 1<<20)
	defer s.Close()
	if v, _, _ := s.Writer().Get([]byte("k")); string(v) != "v" {
		t.Fatalf("k = %q", v)
	}
	if _, err := os.Stat(root + "/db.old"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("db.old still there: %v", err)
	}
}

func TestUncachedKeysStayOutOfTheHotCache(t *testing.T) {
	s, err := Open(t.TempDir(), Options{BlockCacheBytes: 1 << 20, HotBytes: 1 << 20,
		Uncached: func(k []byte) bool { return k[0] == 'r' }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeTxn{t, s}.Set([]byte("r1"), []byte("answer"))
	storeTxn{t, s}.Set([]byte("k1"), []byte("hot"))
	for _, k := range []string{"r1", "r2"} {
		_ = s.View(func(r kv.Reader) error { _, _, err := r.Get([]byte(k)); return err })
	}
	for _, k := range []string{"r1", "r2"} {
		if _, _, cached := s.cache.get([]byte(k)); cached {
			t.Errorf("%s is in the hot cache", k)
		}
	}
	if _, _, cached := s.cache.get([]byte("k1")); !cached {
		t.Error("k1 is not in the hot cache")
	}
	if v, ok, _ := s.Writer().Get([]byte("r1")); !ok || string(v) != "answer" {
		t.Fatalf("r1 = %q %v", v, ok)
	}
}

// The writer's reads go through an iterator it keeps between commits: each
// commit must show in them, with no cache to answer for it.
func TestWriterReadsSeeEveryCommit(t *testing.T) {
	s := open(t, t.TempDir(), 0)
	defer s.Close()
	w := s.Writer()
	for i, want := range []string{"v1", "v2", ""} {
		ov := kv.NewOverlay(w)
		if want == "" {
			ov.Delete([]byte("k"))
		} else {
			ov.Set([]byte("k"), []byte(want))
		}
		if _, _, err := w.Get([]byte("k")); err != nil { // a read between commits
			t.Fatal(err)
		}
		if err := s.Commit(ov, false); err != nil {
			t.Fatal(err)
		}
		v, ok, err := w.Get([]byte("k"))
		if err != nil || string(v) != want || ok != (want != "") {
			t.Fatalf("commit %d: the writer reads %q %v %v, want %q", i, v, ok, err, want)
		}
	}
}

// A View after Close (a call still in flight while its server stops) fails
// with ErrClosed instead of panicking in pebble; so does a second Close.
func TestViewAfterCloseFails(t *testing.T) {
	s := open(t, t.TempDir(), 1<<20)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err := s.View(func(r kv.Reader) error {
		_, _, err := r.Get([]byte("a"))
		return err
	})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("a view after close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a second close: %v", err)
	}
}

// GetAppend reads what Get reads, appended to the caller's buffer, from
// pebble, from the hot cache, through the writer and the readers; a missing
// key leaves the buffer as it was. One buffer serves a loop of lookups.
func TestGetAppend(t *testing.T) {
	for _, hot := range []int64{0, 1 << 20} {
		t.Run(fmt.Sprintf("hot=%d", hot), func(t *testing.T) {
			s := open(t, t.TempDir(), hot)
			defer s.Close()
			storeTxn{t, s}.Set([]byte("a"), []byte("apple"))
			storeTxn{t, s}.Set([]byte("b"), []byte("banana"))
			storeTxn{t, s}.Set([]byte("e"), []byte{})
			check := func(name string, r kv.Reader) {
				a := r.(kv.AppendGetter)
				buf := []byte("head:")
				for round := range 3 { // pebble first, then the cache if any
					for _, key := range []string{"a", "b", "e", "missing", "a"} {
						want, wantOK, err := r.Get([]byte(key))
						if err != nil {
							t.Fatal(err)
						}
						got, ok, err := a.GetAppend(buf[:5], []byte(key))
						if err != nil || ok != wantOK || string(got) != "head:"+string(want) {
							t.Fatalf("%s round %d: GetAppend(%q) = %q %v %v, want %q %v", name, round,
								key, got, ok, err, "head:"+string(want), wantOK)
						}
						buf = got
					}
					got, ok, err := a.GetAppend(nil, []byte("b"))
					if err != nil || !ok || string(got) != "banana" {
						t.Fatalf("%s: GetAppend(nil, b) = %q %v %v", name, got, ok, err)
					}
				}
			}
			check("writer", s.Writer())
			if err := s.View(func(r kv.Reader) error { check("reader", r); return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
}
