package worker

import (
	"io"
	"sync"
)

// byteBudget bounds the bytes that read-ahead has asked of the bucket and
// not yet received. A fetch takes its chunk's bytes before it starts and
// gives them back as they arrive, so the next fetch starts while earlier
// ones are still transferring: fetches are staggered along the link and
// end one after another, instead of starting together, sharing the link,
// ending together and leaving it idle for a request's latency before the
// next ones (see docs/benchmarks.md, cold reads). Takers are served in the
// order they asked, so a stream's chunks start in offset order.
type byteBudget struct {
	mu struct {
		sync.Mutex
		free    int64
		waiters []budgetWaiter
	}
	total int64
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newByteBudget(total int64) *byteBudget {
	b := &byteBudget{total: total}
	b.mu.free = total
	return b
}

// take waits until n bytes (at most the whole budget) are free, after
// every earlier taker, and returns how many it took: the caller gives
// back exactly that.
func (b *byteBudget) take(n int64) int64 {
	n = min(n, b.total)
	b.mu.Lock()
	if len(b.mu.waiters) == 0 && b.mu.free >= n {
		b.mu.free -= n
		b.mu.Unlock()
		return n
	}
	ready := make(chan struct{})
	b.mu.waiters = append(b.mu.waiters, budgetWaiter{n: n, ready: ready})
	b.mu.Unlock()
	<-ready
	return n
}

// give returns n bytes to the budget and starts the waiters they let in.
func (b *byteBudget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.free += n
	for len(b.mu.waiters) > 0 && b.mu.free >= b.mu.waiters[0].n {
		w := b.mu.waiters[0]
		b.mu.waiters = b.mu.waiters[1:]
		b.mu.free -= w.n
		close(w.ready)
	}
}

// budgetReader gives back to its budget each byte read through it, up to
// what was taken; the rest goes back at close.
type budgetReader struct {
	io.Reader
	b    *byteBudget
	left int64
}

func (r *budgetReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	back := min(int64(n), r.left)
	r.left -= back
	r.b.give(back)
	return n, err
}

// close gives back what was not read.
func (r *budgetReader) close() {
	r.b.give(r.left)
	r.left = 0
}
