package logevery

import (
	"testing"
	"time"
)

// The first event is logged; the next ones within Every are counted, and
// told with the first event logged after it.
func TestAllowCountsWhatItHolds(t *testing.T) {
	l := Limiter{Every: time.Minute}
	t0 := time.Unix(1000, 0)
	for i, c := range []struct {
		at time.Duration
		n  int
		ok bool
	}{{0, 1, true}, {time.Second, 0, false}, {59 * time.Second, 0, false}, {time.Minute, 3, true}, {61 * time.Second, 0, false}} {
		if n, ok := l.Allow(t0.Add(c.at)); n != c.n || ok != c.ok {
			t.Errorf("event %d at %v: %d %v, want %d %v", i+1, c.at, n, ok, c.n, c.ok)
		}
	}
}
