package callwire

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// WatchAfter is how long a call runs before the server watches its client:
// from then on, the client closing the connection (or the connection
// breaking) cancels the call's context, as gRPC cancels a call whose client
// went. A call costs its connection two atomic stores and a load; one
// goroutine of the server looks at the calls running, twice a WatchAfter.
const WatchAfter = time.Second

// peerWatch watches a connection's client while one of its calls runs
// long. The calls loop reads nothing during a call and the client sends
// nothing before its answer, so a read then ends only with the connection:
// that cancels the connection's context, and the call with it.
type peerWatch struct {
	c      net.Conn
	r      *bufio.Reader
	cancel context.CancelFunc
	onRead func() // tests: called when a read starts

	since   atomic.Int64 // when the running call began (UnixNano); 0 between calls
	started atomic.Bool  // check may have started a read: stop takes mu

	mu      sync.Mutex
	reading chan struct{} // closed when the read ends; nil if none runs
}

// start marks a call begun.
func (w *peerWatch) start() { w.since.Store(time.Now().UnixNano()) }

// check starts the read if the call running began before cutoff.
//
// NB: check stores started before it loads since again, and stop stores
// since before it loads started: one of the two sees the other's store, so
// a read never outlives its call unnoticed.
func (w *peerWatch) check(cutoff int64) {
	since := w.since.Load()
	if since == 0 || since > cutoff {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reading != nil {
		return
	}
	w.started.Store(true)
	if w.since.Load() != since {
		w.started.Store(false)
		return // the call ended meanwhile
	}
	// NB: the idle deadline is not the call's: the read waits for the
	// client, however long the call runs, until stop ends it.
	_ = w.c.SetReadDeadline(time.Time{})
	done := make(chan struct{})
	w.reading = done
	if w.onRead != nil {
		w.onRead()
	}
	go func() {
		defer close(done)
		// NB: Peek keeps what it reads for the calls loop: a client that
		// sent its next request early loses nothing.
		if _, err := w.r.Peek(1); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			w.cancel()
		}
	}()
}

// stop marks the call ended and ends its read, if one started; it reports
// whether it did, by a read deadline set to now: the connection's read
// deadline is then to be set again.
func (w *peerWatch) stop() bool {
	w.since.Store(0)
	if !w.started.Load() {
		return false
	}
	w.mu.Lock()
	done := w.reading
	w.reading = nil
	w.started.Store(false)
	w.mu.Unlock()
	if done == nil {
		return false
	}
	_ = w.c.SetReadDeadline(time.Now())
	<-done
	return true
}

// watchCalls starts the server's look at its calls running, once.
func (s *Server) watchCalls() {
	s.watchOnce.Do(func() { go s.lookAtCalls() })
}

// lookAtCalls has the calls that have run s.watch watched, until Close.
func (s *Server) lookAtCalls() {
	t := time.NewTicker(s.watch / 2)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case now := <-t.C:
			cutoff := now.UnixNano() - int64(s.watch)
			s.mu.Lock()
			for _, w := range s.mu.conns {
				if w != nil {
					w.check(cutoff)
				}
			}
			s.mu.Unlock()
		}
	}
}
