package benchkit

import (
	"slices"
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

// Latency summarizes a latency distribution. A report shows the
// percentiles it cares for; computing all of them costs next to nothing.
type Latency struct {
	P50, P95, P99, P999 time.Duration
	Max                 time.Duration // exact, not bucketed
	Mean                time.Duration
}

// Recorder collects one goroutine's latencies. It is not safe for
// concurrent use: every goroutine has its own, so that the hot path takes
// no shared lock, and Summarize merges them at the end.
type Recorder struct {
	h   *hdrhistogram.Histogram
	max time.Duration
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{h: hdrhistogram.New(int64(minLatency), int64(maxLatency), sigFigs)}
}

// Record adds one operation's latency; a negative one counts as 0.
func (r *Recorder) Record(d time.Duration) {
	r.max = max(r.max, d)
	_ = r.h.RecordValue(int64(min(max(d, 0), maxLatency)))
}

// Reset empties the recorder, to reuse it for another measurement.
func (r *Recorder) Reset() {
	r.h.Reset()
	r.max = 0
}

// Count is the number of latencies recorded.
func (r *Recorder) Count() int64 { return r.h.TotalCount() }

// Summarize merges the recorders' histograms and reads the percentiles;
// the zero Latency if nothing was recorded.
func Summarize(rs []*Recorder) Latency {
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

// Median returns the median of ds (the mean of the middle two when even),
// 0 for none; ds is left as it was.
func Median(ds []time.Duration) time.Duration {
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
