package client_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// BenchmarkFlush writes 1,000-byte records to files being written, each
// followed by a flush (HBase's log: hflush per batch of edits), one
// writer per file, against a dev server (service and worker in one other
// process): ns/op is one record and its flush, p50-µs the median flush,
// server-cpu-µs/op the dev server's CPU time per record (steadier than
// ns/op on a busy machine), and commands/entry the commands the service
// put in each Raft entry it proposed meanwhile. STRATA_BENCH_PPROF, an
// address, has the dev server serve Go's profiles there.
func BenchmarkFlush(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) { benchmarkFlush(b, writers, (*client.Writer).Flush) })
	}
}

// BenchmarkSync is BenchmarkFlush with Sync (hsync) for Flush.
func BenchmarkSync(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) { benchmarkFlush(b, writers, (*client.Writer).Sync) })
	}
}

func benchmarkFlush(b *testing.B, writers int, flush func(*client.Writer) error) {
	args := []string{"--http-listen", "127.0.0.1:0"}
	if a := os.Getenv("STRATA_BENCH_PPROF"); a != "" {
		args = append(args, "--pprof-listen", a)
	}
	dev := testcluster.StartDev(b, b.TempDir(), args...)
	c := testcluster.Client(b, dev.Addr, "")
	ctx := context.Background()
	record := make([]byte, 1000)
	var mu sync.Mutex
	var lat []time.Duration
	per := b.N/writers + 1
	entries0, commands0 := proposals(b, dev)
	cpu0 := dev.CPU()
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
				if err := flush(w); err != nil {
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
	entries, commands := proposals(b, dev)
	b.ReportMetric(float64((dev.CPU()-cpu0).Microseconds())/float64(b.N), "server-cpu-µs/op")
	if entries > entries0 {
		b.ReportMetric((commands-commands0)/(entries-entries0), "commands/entry")
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	}
}

// proposals returns the Raft entries the service at p proposed so far,
// and the commands they carried, from its metrics.
func proposals(b *testing.B, p *testcluster.Process) (entries, commands float64) {
	b.Helper()
	resp, err := http.Get("http://" + p.HTTP() + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), " ")
		switch name {
		case "strata_raft_proposal_commands_count":
			entries, _ = strconv.ParseFloat(v, 64)
		case "strata_raft_proposal_commands_sum":
			commands, _ = strconv.ParseFloat(v, 64)
		}
	}
	return entries, commands
}
