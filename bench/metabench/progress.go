package metabench

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
)

// progress prints, every ProgressEvery while a phase runs, how far it got;
// the returned function stops it.
func (r *runner) progress(st step, threads []*thread) (stop func()) {
	n, total := len(threads), int64(0)
	for _, th := range threads {
		total += int64(th.n)
	}
	name := phaseName(st)
	fmt.Fprintf(r.cfg.Progress, "threads %d: %s: %d operations\n", n, name, total)
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(r.cfg.ProgressEvery)
		defer t.Stop()
		start, last, lastAt := time.Now(), int64(0), time.Now()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				done := r.done.Load()
				fmt.Fprintf(r.cfg.Progress, "threads %d: %s: %d/%d (%.0f%%) after %s, %.0f ops/s now\n",
					n, name, done, total, 100*float64(done)/float64(max(total, 1)),
					now.Sub(start).Round(time.Second), perSec(done-last, now.Sub(lastAt)))
				last, lastAt = done, now
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// report prints a phase's outcome on the progress output.
func (r *runner) report(st step, res Result) {
	name := phaseName(st)
	l := res.Latency
	fmt.Fprintf(r.cfg.Progress, "threads %d: %s: %d ops in %.2fs, %.0f ops/s, cpu %.0f%% (host %.0f%%), p50 %sms p99 %sms max %sms",
		res.Threads, name, res.Ops, res.Elapsed.Seconds(), res.OpsPerSec(), res.CPUPercent(), res.HostCPU,
		benchkit.Millis(l.P50), benchkit.Millis(l.P99), benchkit.Millis(l.Max))
	if res.Errors > 0 {
		fmt.Fprintf(r.cfg.Progress, ", %d FAILED, the first: %s", res.Errors, res.FirstError)
	}
	fmt.Fprintln(r.cfg.Progress)
}

func phaseName(st step) string {
	if !st.timed {
		return string(st.op) + " (preparation, untimed)"
	}
	return string(st.op)
}
