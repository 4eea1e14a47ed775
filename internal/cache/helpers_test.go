package cache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

const testPS = 4096 // page size of most tests

// blockBytes is the content of a test block: size bytes determined by key,
// so any test can tell a right byte from a wrong one.
func blockBytes(key string, size int64) []byte {
	r := rand.New(rand.NewPCG(xxhash.Sum64String(key), 7))
	out := make([]byte, (size+7)/8*8)
	for i := 0; i < len(out); i += 8 {
		binary.LittleEndian.PutUint64(out[i:], r.Uint64())
	}
	return out[:size]
}

// fakeClock is a settable clock for Config.Clock.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time { return f.t }
func (f *fakeClock) advance()       { f.t = f.t.Add(time.Second) }

// testConfig is one directory of capacity pages of testPS bytes.
func testConfig(t testing.TB, capacityPages int64) Config {
	return Config{
		Dirs:     []Dir{{Path: t.TempDir(), Capacity: capacityPages * testPS}},
		PageSize: testPS,
	}
}

func mustOpen(t testing.TB, cfg Config) *Cache {
	t.Helper()
	c, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

func mustPut(t testing.TB, c *Cache, key string, data []byte, off int64) {
	t.Helper()
	if err := c.Put(key, off, data[off:]); err != nil {
		t.Fatalf("Put(%s, %d): %v", key, off, err)
	}
}

// putPages caches pages [from, to) of a block of size bytes.
func putPages(t testing.TB, c *Cache, key string, size int64, from, to int64) {
	t.Helper()
	data := blockBytes(key, size)
	lo, hi := from*c.ps, min(to*c.ps, size)
	if err := c.Put(key, lo, data[lo:hi]); err != nil {
		t.Fatalf("Put(%s, pages %d-%d): %v", key, from, to, err)
	}
}

// checkRead reads [off, off+n) of a block of size bytes and wants the
// block's bytes, cut at size with io.EOF.
func checkRead(t testing.TB, c *Cache, key string, size, off, n int64) {
	t.Helper()
	p := make([]byte, n)
	got, err := c.ReadAt(key, p, off)
	want := blockBytes(key, size)[min(off, size):min(off+n, size)]
	if off+n > size && err == nil {
		t.Fatalf("ReadAt(%s, %d+%d) past the end %d: no io.EOF", key, off, n, size)
	}
	if err != nil && !(off+n > size && errors.Is(err, io.EOF)) {
		t.Fatalf("ReadAt(%s, %d+%d): %v", key, off, n, err)
	}
	if !bytes.Equal(p[:got], want) {
		t.Fatalf("ReadAt(%s, %d+%d): wrong bytes (%d returned, %d wanted)", key, off, n, got, len(want))
	}
}

// wantErr fails unless errors.Is(err, want).
func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

// testBlock returns the block of key, for its immutable fields (paths).
func (c *Cache) testBlock(key string) *block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.blocks[key]
}

// corruptByte flips one byte of key's data file at off.
func corruptByte(t testing.TB, c *Cache, key string, off int64) {
	t.Helper()
	b := c.testBlock(key)
	if b == nil {
		t.Fatalf("%s is not cached", key)
	}
	f, err := os.OpenFile(b.dataPath(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var one [1]byte
	if _, err := f.ReadAt(one[:], off); err != nil {
		t.Fatal(err)
	}
	one[0] ^= 0x5a
	if _, err := f.WriteAt(one[:], off); err != nil {
		t.Fatal(err)
	}
}

func cached(c *Cache, key string, off, length int64) bool {
	return len(c.Missing(key, off, length)) == 0
}
