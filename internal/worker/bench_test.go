package worker_test

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// benchFile writes a file of n bytes in 64 MiB blocks (the service's
// default) to a fresh in-process cluster and returns a client on the same
// host, so that reads of it are short-circuit.
func benchFile(b *testing.B, n int) (*client.Client, string) {
	b.Helper()
	l := startLocal(b, 2*int64(n), nil)
	c := testcluster.Client(b, l.svc.Addr, "")
	w, err := c.Create(context.Background(), "/bench", client.CreateOptions{BlockSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := w.Write(randomBytes(1, n)); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return c, "/bench"
}

// BenchmarkShortCircuitSequential reads a cached 256 MiB file front to back
// in 1 MiB calls, as `strata bench data`'s warm sequential phase does.
func BenchmarkShortCircuitSequential(b *testing.B) {
	const size = 256 << 20
	c, path := benchFile(b, size)
	buf := make([]byte, 1<<20)
	b.SetBytes(size)
	b.ResetTimer()
	for range b.N {
		r, err := c.Open(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil || n != size {
			b.Fatalf("read %d: %v", n, err)
		}
		r.Close()
	}
}

// BenchmarkShortCircuitRandom4K reads 4 KiB at random aligned offsets of a
// cached 256 MiB file.
func BenchmarkShortCircuitRandom4K(b *testing.B) {
	const size = 256 << 20
	c, path := benchFile(b, size)
	r, err := c.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 4<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		off := rng.Int64N(size/int64(len(buf))) * int64(len(buf))
		if _, err := r.ReadAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
}
