package client_test

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// Concat against a real server: files of several blocks, a small (inline)
// file and a target of each kind become one file that reads back as their
// bytes in order, whose checksum is theirs; the sources are gone; the
// result concatenated again reads the same; refusals leave everything as
// it was.
func TestConcatReadsBackTheSourcesInOrder(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	c := testcluster.Client(t, addr, "")
	rng := rand.New(rand.NewPCG(5, 6))
	put := func(p string, n int) []byte {
		t.Helper()
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		w, err := c.Create(ctx, p, client.CreateOptions{BlockSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b
	}
	var want []byte
	want = append(want, put("/cat/t", 2<<20+100)...)
	want = append(want, put("/cat/a", 3<<20+7)...)
	want = append(want, put("/cat/small", 1000)...)
	want = append(want, put("/cat/b", 5000)...)
	empty := put("/cat/empty", 0)
	if err := c.Concat(ctx, "/cat/t", []string{"/cat/a", "/cat/empty"}); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Fatalf("concat of an empty source: %v", err)
	}
	if err := c.Concat(ctx, "/cat/t", []string{"/cat/a", "/cat/small", "/cat/b"}); err != nil {
		t.Fatal(err)
	}
	check := func(p string, want []byte) {
		t.Helper()
		got, err := c.ReadFile(ctx, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes (%v), want the %d concatenated", p, len(got), err, len(want))
		}
		sum, err := c.Checksum(ctx, p)
		if err != nil || sum.CRC32C != crc32.Checksum(want, castagnoli) {
			t.Fatalf("%s: checksum %+v, %v", p, sum, err)
		}
	}
	check("/cat/t", want)
	for _, p := range []string{"/cat/a", "/cat/small", "/cat/b"} {
		if _, err := c.Stat(ctx, p); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("source %s after concat: %v", p, err)
		}
	}
	// A small target, then the result again: blocks moved twice.
	want2 := append(put("/cat/u", 10), want...)
	if err := c.Concat(ctx, "/cat/u", []string{"/cat/t"}); err != nil {
		t.Fatal(err)
	}
	check("/cat/u", want2)
	if _, err := c.UncacheFile(ctx, "/cat/u"); err != nil {
		t.Fatal(err)
	}
	check("/cat/u", want2) // from the bucket, each object where it was written
	sum, err := c.ContentSummary(ctx, "/cat")
	if err != nil || sum.Length != uint64(len(want2)+len(empty)) || sum.FileCount != 2 {
		t.Fatalf("summary after concat: %+v, %v", sum, err)
	}
	other := testcluster.Client(t, addr, "mallory")
	if err := other.Concat(ctx, "/cat/u", []string{"/cat/empty"}); !errors.Is(err, fserr.ErrPermission) {
		t.Fatalf("another user's concat: %v", err)
	}
}
