package databench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stratafs/strata/internal/object/mem"
)

func TestPrefetcherReadsWholeObjects(t *testing.T) {
	ctx := context.Background()
	const get = 1000
	r := &runner{cfg: Config{DirectGet: get, DirectAhead: 3}}
	r.direct.bucket = mem.New()
	pat := newPattern(3, 8192)
	// Empty, shorter than a GET, one GET less, exactly and one byte more,
	// and several GETs (more than in flight) with a short last one.
	for _, size := range []int{0, 1, get - 1, get, get + 1, 7*get + 3} {
		want := pat.at(0, 0, size)
		if _, err := r.direct.bucket.Put(ctx, "o", bytes.NewReader(want), int64(size)); err != nil {
			t.Fatal(err)
		}
		// Reads smaller, larger and not a divisor of the GET size.
		for _, call := range []int{1, 333, get, 4096} {
			before := r.direct.read.Load()
			pf := r.newPrefetcher(ctx, "o", int64(size))
			got, err := io.ReadAll(&chunked{pf, call})
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("size %d, calls of %d: read %d bytes (%v), want %d", size, call, len(got), err, size)
			}
			if n := r.direct.read.Load() - before; n != uint64(size) {
				t.Errorf("size %d: %d bytes counted from the bucket", size, n)
			}
			pf.Close()
		}
	}
}

func TestPrefetcherStopsOnError(t *testing.T) {
	ctx := context.Background()
	r := &runner{cfg: Config{DirectGet: 100, DirectAhead: 2}}
	r.direct.bucket = mem.New()
	if _, err := r.direct.bucket.Put(ctx, "o", bytes.NewReader(make([]byte, 250)), 250); err != nil {
		t.Fatal(err)
	}
	// The reader believes the object longer than it is: the GET past its
	// end fails, and so does the read, rather than return fewer bytes.
	pf := r.newPrefetcher(ctx, "o", 400)
	defer pf.Close()
	if n, err := io.Copy(io.Discard, pf); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("read %d bytes of a 250-byte object taken for 400, err %v", n, err)
	}
	// A missing object fails too, and Close waits for the GETs in flight.
	pf2 := r.newPrefetcher(ctx, "missing", 1000)
	if _, err := pf2.Read(make([]byte, 10)); err == nil {
		t.Error("read of a missing object succeeded")
	}
	if err := pf2.Close(); err != nil {
		t.Error(err)
	}
}

func TestObjectAtReadsExactRanges(t *testing.T) {
	ctx := context.Background()
	r := &runner{}
	r.direct.bucket = mem.New()
	data := newPattern(5, 4096).at(1, 0, 5000)
	if _, err := r.direct.bucket.Put(ctx, "k", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	o := &objectAt{ctx: ctx, d: &r.direct, key: "k", size: int64(len(data))}
	buf := make([]byte, 1000)
	if n, err := o.ReadAt(buf, 2000); err != nil || n != 1000 || !bytes.Equal(buf, data[2000:3000]) {
		t.Errorf("ReadAt(1000 at 2000) = %d, %v", n, err)
	}
	if n, err := o.ReadAt(buf, 4500); n != 500 || !errors.Is(err, io.EOF) || !bytes.Equal(buf[:n], data[4500:]) {
		t.Errorf("ReadAt past the end = %d, %v; want 500, EOF", n, err)
	}
	if r.direct.read.Load() != 1500 {
		t.Errorf("%d bytes counted, want the 1500 asked for", r.direct.read.Load())
	}
}

// chunked reads from r in calls of at most n bytes.
type chunked struct {
	r io.Reader
	n int
}

func (c *chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
