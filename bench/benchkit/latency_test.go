package benchkit

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	// Two goroutines: 1..1000 µs and 1001..2000 µs, so the merged
	// distribution is 1..2000 µs, plus one 3 s outlier on the second.
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 1000; i++ {
		a.Record(time.Duration(i) * time.Microsecond)
		b.Record(time.Duration(1000+i) * time.Microsecond)
	}
	b.Record(3*time.Second + 7*time.Nanosecond)
	l := Summarize([]*Recorder{a, b})
	near := func(name string, got, want time.Duration) {
		t.Helper()
		// Three significant digits: within 0.1%, plus the 1 µs floor.
		if diff := (got - want).Abs(); diff > want/1000+time.Microsecond {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("p50", l.P50, 1000*time.Microsecond)
	near("p95", l.P95, 1901*time.Microsecond)
	near("p99", l.P99, 1981*time.Microsecond)
	near("p99.9", l.P999, 1999*time.Microsecond)
	if l.Max != 3*time.Second+7*time.Nanosecond {
		t.Errorf("max = %v, want the exact outlier", l.Max)
	}
	if a.Count()+b.Count() != 2001 {
		t.Errorf("count = %d", a.Count()+b.Count())
	}
}

func TestSummarizeClampsAndResets(t *testing.T) {
	ms := time.Millisecond
	a, b := NewRecorder(), NewRecorder()
	for i := 1; i <= 100; i++ {
		a.Record(time.Duration(i) * ms)
	}
	b.Record(time.Hour) // above the histogram's range: clamped, max exact
	if l := Summarize([]*Recorder{a, b}); l.Max != time.Hour || l.P50 < 49*ms || l.P50 > 52*ms || l.P99 > l.Max {
		t.Errorf("summary %+v", l)
	}

	// Reset recorders start over; out-of-range values are clamped, not lost.
	a.Reset()
	a.Record(-time.Second)
	a.Record(time.Hour)
	l := Summarize([]*Recorder{a})
	if a.Count() != 2 || l.Max != time.Hour || l.P50 > l.Max || l.P999 > l.Max {
		t.Errorf("after reset: count %d, %+v", a.Count(), l)
	}
	if l := Summarize([]*Recorder{NewRecorder()}); l != (Latency{}) {
		t.Errorf("empty: %+v", l)
	}
}

func TestMedian(t *testing.T) {
	ms := time.Millisecond
	in := []time.Duration{3 * ms, 1 * ms, 2 * ms}
	if m := Median(in); m != 2*ms || in[0] != 3*ms {
		t.Errorf("median of 3: %v (input now %v)", m, in)
	}
	if m := Median([]time.Duration{4 * ms, 1 * ms, 2 * ms, 3 * ms}); m != 2500*time.Microsecond {
		t.Errorf("median of 4: %v", m)
	}
	if m := Median(nil); m != 0 {
		t.Errorf("median of none: %v", m)
	}
}
