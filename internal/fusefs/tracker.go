package fusefs

import (
	"log/slog"
	"sort"
	"sync"
	"time"
)

// tracker times every request, so that one that hangs is seen: the log
// names each request that has run longer than hungAfter (once), and the
// metrics count it, until it ends.
type tracker struct {
	hungAfter time.Duration
	log       *slog.Logger
	done      chan struct{}
	mu        struct {
		sync.Mutex
		next     uint64
		inflight map[uint64]*request
		ops      map[string]*OpStats
		hungAll  uint64
		refusals map[uint32]bool // uids whose refusal was logged
	}
}

type request struct {
	op     string
	node   uint64
	start  time.Time
	logged bool
}

// OpStats are one operation's counters.
type OpStats struct {
	Count   uint64
	Seconds float64 // total time spent
}

// Stats are the mount's counters: its requests by operation, in flight,
// and hung (running past the limit) now and since it started.
type Stats struct {
	Ops      map[string]OpStats
	InFlight int
	Hung     int
	HungAll  uint64
	Oldest   time.Duration // the longest-running request's time so far
}

func newTracker(hungAfter time.Duration, log *slog.Logger) *tracker {
	t := &tracker{hungAfter: hungAfter, log: log, done: make(chan struct{})}
	t.mu.inflight = map[uint64]*request{}
	t.mu.ops = map[string]*OpStats{}
	t.mu.refusals = map[uint32]bool{}
	go t.watch()
	return t
}

// begin starts timing a request; call what it returns when it ends.
func (t *tracker) begin(op string, node uint64) func() {
	now := time.Now()
	t.mu.Lock()
	t.mu.next++
	id := t.mu.next
	t.mu.inflight[id] = &request{op: op, node: node, start: now}
	t.mu.Unlock()
	return func() {
		d := time.Since(now)
		t.mu.Lock()
		defer t.mu.Unlock()
		r := t.mu.inflight[id]
		delete(t.mu.inflight, id)
		s := t.mu.ops[op]
		if s == nil {
			s = &OpStats{}
			t.mu.ops[op] = s
		}
		s.Count++
		s.Seconds += d.Seconds()
		if r.logged {
			t.log.Warn("a hung request ended", "op", op, "node", node, "after", d.Round(time.Millisecond))
		}
	}
}

// refused logs, once per uid, why a caller's requests are refused.
func (t *tracker) refused(uid uint32, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.mu.refusals[uid] {
		t.mu.refusals[uid] = true
		t.log.Warn("a caller's requests are refused (EACCES)", "uid", uid, "why", err)
	}
}

// watch logs requests as they pass hungAfter.
func (t *tracker) watch() {
	tick := time.NewTicker(max(t.hungAfter/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return
		case <-tick.C:
			t.logHung()
		}
	}
}

func (t *tracker) logHung() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.mu.inflight {
		if d := time.Since(r.start); !r.logged && d > t.hungAfter {
			r.logged = true
			t.mu.hungAll++
			t.log.Warn("a request hangs", "op", r.op, "node", r.node, "running", d.Round(time.Millisecond))
		}
	}
}

func (t *tracker) stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{Ops: map[string]OpStats{}, InFlight: len(t.mu.inflight), HungAll: t.mu.hungAll}
	for op, o := range t.mu.ops {
		s.Ops[op] = *o
	}
	for _, r := range t.mu.inflight {
		d := time.Since(r.start)
		s.Oldest = max(s.Oldest, d)
		if d > t.hungAfter {
			s.Hung++
		}
	}
	return s
}

// OpNames returns the operations counted, sorted.
func (s Stats) OpNames() []string {
	names := make([]string, 0, len(s.Ops))
	for n := range s.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (t *tracker) stop() { close(t.done) }
