package databench

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency histograms record nanoseconds from 1 µs to maxLatency with three
// significant digits; a slower operation is recorded as maxLatency, and
// Max still reports it exactly.
const (
	minLatency = time.Microsecond
	maxLatency = 10 * time.Minute
	sigFigs    = 3
)

// Latency summarizes the latency distribution of a measurement's
// operations, over all its rounds.
type Latency struct {
	P50, P99, P999 time.Duration
	Max            time.Duration // exact, not bucketed
	Mean           time.Duration
}

// recorder collects one goroutine's latencies. It is not safe for
// concurrent use: every reader has its own, merged at the end.
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
	l.P50, l.P99, l.P999 = at(50), at(99), at(99.9)
	l.Mean = time.Duration(total.Mean())
	return l
}

// median returns the median of ds (the mean of the middle two when even).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
