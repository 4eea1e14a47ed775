// Package logevery lets an event that may repeat fast (a refused
// connection, a page the cache could not store) be logged at most once an
// interval, with how many times it happened since the last line. It is not
// a logger: its caller logs, when told to.
package logevery

import (
	"sync"
	"time"
)

// Limiter allows a line at most every Every (0: every event).
//
// Safe for concurrent use; the zero value with Every set is ready.
type Limiter struct {
	Every time.Duration

	mu struct {
		sync.Mutex
		last  time.Time
		count int // events since the last line
	}
}

// Allow counts an event at now and reports whether to log it, with the
// events since the last line (this one included).
func (l *Limiter) Allow(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.count++
	if !l.mu.last.IsZero() && now.Sub(l.mu.last) < l.Every {
		return 0, false
	}
	n := l.mu.count
	l.mu.last, l.mu.count = now, 0
	return n, true
}
