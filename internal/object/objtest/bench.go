package objtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

// Bench runs the shared benchmarks against s, which may hold other objects
// (everything it writes is under "bench/"). Sizes stand for a small file's
// block, a read-ahead unit and a whole block.
func Bench(b *testing.B, s object.Store) {
	for _, size := range []int{4 << 10, 1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("Put/%s", sizeName(size)), func(b *testing.B) { benchPut(b, s, size) })
		b.Run(fmt.Sprintf("Get/%s", sizeName(size)), func(b *testing.B) { benchGet(b, s, size, false) })
		b.Run(fmt.Sprintf("GetParallel/%s", sizeName(size)), func(b *testing.B) { benchGet(b, s, size, true) })
	}
	b.Run("GetRange/64KiB", benchGetRange(s))
	b.Run("Head", benchHead(s))
	b.Run("List/100", benchList(s))
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

func benchPut(b *testing.B, s object.Store, size int) {
	data := Data(30, size)
	ctx := context.Background()
	b.SetBytes(int64(size))
	i := 0
	for b.Loop() {
		// A bounded key set keeps in-memory stores from growing with b.N.
		key := fmt.Sprintf("bench/put/%d/%d", size, i%32)
		if _, err := s.Put(ctx, key, bytes.NewReader(data), int64(size)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func benchGet(b *testing.B, s object.Store, size int, parallel bool) {
	key := fmt.Sprintf("bench/get/%d", size)
	put(b, s, key, Data(31, size))
	b.SetBytes(int64(size))
	b.ResetTimer()
	if !parallel {
		for b.Loop() {
			readAll(b, s, key, 0, -1)
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			readAll(b, s, key, 0, -1)
		}
	})
}

func benchGetRange(s object.Store) func(b *testing.B) {
	return func(b *testing.B) {
		const size, chunk = 8 << 20, 64 << 10
		put(b, s, "bench/range", Data(32, size))
		b.SetBytes(chunk)
		var n atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				off := (n.Add(1) * 7919 * chunk) % (size - chunk)
				readAll(b, s, "bench/range", off, chunk)
			}
		})
	}
}

func benchHead(s object.Store) func(b *testing.B) {
	return func(b *testing.B) {
		put(b, s, "bench/head", []byte("x"))
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			if _, err := s.Head(ctx, "bench/head"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchList(s object.Store) func(b *testing.B) {
	return func(b *testing.B) {
		for i := range 100 {
			put(b, s, fmt.Sprintf("bench/list/%03d", i), []byte("x"))
		}
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			if infos, err := s.List(ctx, "bench/list/", "", 0); err != nil || len(infos) != 100 {
				b.Fatalf("List = %d entries, %v", len(infos), err)
			}
		}
	}
}

// readAll reports failure with Error, not Fatal, as it also runs on
// RunParallel's goroutines.
func readAll(b *testing.B, s object.Store, key string, off, length int64) {
	rc, err := s.Get(context.Background(), key, off, length)
	if err != nil {
		b.Error(err)
		return
	}
	defer rc.Close()
	if _, err = io.Copy(io.Discard, rc); err != nil {
		b.Error(err)
	}
}
