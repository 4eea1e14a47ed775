package client_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// BenchmarkFlush writes 1,000-byte records to files being written, each
// followed by a flush (HBase's log: hflush per batch of edits), one
// writer per file, against a dev server (service and worker in one other process): ns/op is one record
// and its flush, and p50-µs the median flush.
func BenchmarkFlush(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dev := testcluster.StartDev(b, b.TempDir())
			c := testcluster.Client(b, dev.Addr, "")
			ctx := context.Background()
			record := make([]byte, 1000)
			var mu sync.Mutex
			var lat []time.Duration
			per := b.N/writers + 1
			b.ResetTimer()
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w, err := c.Create(ctx, fmt.Sprintf("/wal%d", i), client.CreateOptions{})
					if err != nil {
						b.Error(err)
						return
					}
					mine := make([]time.Duration, 0, per)
					for range per {
						if _, err := w.Write(record); err != nil {
							b.Error(err)
							return
						}
						t0 := time.Now()
						if err := w.Flush(); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
					_ = w.Close()
				}()
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			}
		})
	}
}
