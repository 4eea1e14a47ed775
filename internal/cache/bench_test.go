package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratafs/strata/internal/cputime"
)

// Benchmarks use the default 1 MiB page, on the disk of the test's temp
// directory; figures are MB/s of page data.

const benchPut = 4 << 20 // a worker's fetch chunk

func BenchmarkPut(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(fmt.Sprintf("nosync=%v", noSync), func(b *testing.B) {
			c := mustOpen(b, Config{Dirs: []Dir{{b.TempDir(), 2 << 30}}, NoSync: noSync})
			defer c.Close()
			data := blockBytes("bench", benchPut)
			b.SetBytes(benchPut)
			i := 0
			for b.Loop() {
				if err := c.Put(fmt.Sprintf("k%d", i), 0, data); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkPutParallel(b *testing.B) {
	c := mustOpen(b, Config{Dirs: []Dir{{b.TempDir(), 2 << 30}}})
	defer c.Close()
	data := blockBytes("bench", benchPut)
	var next atomic.Int64
	b.SetBytes(benchPut)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Put(fmt.Sprintf("k%d", next.Add(1)), 0, data); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchCache is 64 blocks of 16 MiB, all cached.
func benchCache(b *testing.B) *Cache {
	c := mustOpen(b, Config{Dirs: []Dir{{b.TempDir(), 2 << 30}}, NoSync: true})
	data := blockBytes("bench", 16<<20)
	for i := range 64 {
		if err := c.Put(fmt.Sprintf("k%d", i), 0, data); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

func BenchmarkReadAt(b *testing.B) {
	c := benchCache(b)
	defer c.Close()
	for _, size := range []int64{4 << 10, 1 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("size=%dKiB", size>>10), func(b *testing.B) {
			p := make([]byte, size)
			b.SetBytes(size)
			i := 0
			for b.Loop() {
				off := int64(i%4)*(4<<20) + 100 // unaligned: partial first and last pages
				if size >= 1<<20 {
					off -= 100
				}
				if _, err := c.ReadAt(fmt.Sprintf("k%d", i%64), p, off); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("size=1024KiB/parallel", func(b *testing.B) {
		b.SetBytes(1 << 20)
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			p := make([]byte, 1<<20)
			for pb.Next() {
				i := next.Add(1)
				if _, err := c.ReadAt(fmt.Sprintf("k%d", i%64), p, (i%16)<<20); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkAcquire(b *testing.B) {
	c := benchCache(b)
	defer c.Close()
	i := 0
	for b.Loop() {
		h, err := c.Acquire(fmt.Sprintf("k%d", i%64), int64(i%16)<<20, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		h.Release()
		i++
	}
}

var openBench struct {
	once sync.Once
	cfg  Config
}

// BenchmarkOpen measures a restart of a cache of 20,000 blocks of 16 pages
// (4 KiB pages, to keep the setup short: Open reads sidecars, not data, so
// only the number of blocks and of records matters).
func BenchmarkOpen(b *testing.B) {
	const blocks = 20000
	openBench.once.Do(func() {
		cfg := Config{Dirs: []Dir{{b.TempDir(), 1 << 40}}, PageSize: testPS, NoSync: true}
		c := mustOpen(b, cfg)
		data := blockBytes("bench", 16*testPS)
		for i := range blocks {
			if err := c.Put(fmt.Sprintf("%016x-%016x", i, i), 0, data); err != nil {
				b.Fatal(err)
			}
		}
		c.Close()
		openBench.cfg = cfg
	})
	cpu0 := cputime.Process()
	for b.Loop() {
		c := mustOpen(b, openBench.cfg)
		if s := c.Stats(); s.Blocks != blocks {
			b.Fatalf("%d blocks after Open", s.Blocks)
		}
		c.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/open")
	b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/open")
}
