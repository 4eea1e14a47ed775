package metabench

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record nanoseconds from 1 µs (the resolution at the
// low end) to maxLatency with three significant digits; a slower operation
// is recorded as maxLatency, and Max still reports it exactly.
const (
	minLatency = time.Microsecond
	maxLatency = 10 * time.Minute
	sigFigs    = 3
)

// Latency summarizes a phase's latency distribution.
type Latency struct {
	P50, P95, P99, P999 time.Duration
	Max                 time.Duration // exact, not bucketed
	Mean                time.Duration
}

// recorder collects one thread's latencies. It is not safe for concurrent
// use: every thread has its own, and they are merged after the phase.
type recorder struct {
	h   *hdrhistogram.Histogram
	max time.Duration
}

func newRecorder() *recorder {
	return &recorder{h: hdrhistogram.New(int64(minLatency), int64(maxLatency), sigFigs)}
}

func (r *recorder) record(d time.Duration) {
	r.max = max(r.max, d)
	_ = r.h.RecordValue(int64(min(max(d, 0), maxLatency)))
}

func (r *recorder) reset() {
	r.h.Reset()
	r.max = 0
}

func (r *recorder) count() int64 { return r.h.TotalCount() }

// summarize merges the recorders' histograms and reads the percentiles.
func summarize(rs []*recorder) Latency {
	total := hdrhistogram.New(int64(minLatency), int64(maxLatency), sigFigs)
	var l Latency
	for _, r := range rs {
		total.Merge(r.h)
		l.Max = max(l.Max, r.max)
	}
	if total.TotalCount() == 0 {
		return Latency{}
	}
	at := func(q float64) time.Duration {
		// NB: a bucket's highest equivalent value can exceed the largest
		// value recorded; never report a percentile above the exact max.
		return min(time.Duration(total.ValueAtQuantile(q)), l.Max)
	}
	l.P50, l.P95, l.P99, l.P999 = at(50), at(95), at(99), at(99.9)
	l.Mean = time.Duration(total.Mean())
	return l
}
