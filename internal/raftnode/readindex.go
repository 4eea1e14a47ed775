package raftnode

import (
	"bytes"
	"context"
	"encoding/binary"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
)

// ReadBarrier returns once this member's state machine has applied every
// entry committed before the call, with the member confirmed as leader by a
// quorum in between (Raft's ReadIndex): a read of the state after it is
// linearizable. Concurrent callers share one ReadIndex round. A lone voter
// needs no round: nobody else can have committed anything.
func (n *Node) ReadBarrier(ctx context.Context) error {
	if err := n.checkLeader(); err != nil {
		return err
	}
	if n.voters.Load() == 1 {
		return nil
	}
	b := n.reads.join()
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return n.stopErr()
	}
}

// readIndex batches read barriers: readers that arrive while a ReadIndex
// round is in flight share the next round, never the current one (which
// may predate their writes' acknowledgement).
type readIndex struct {
	n      *Node
	kick   chan struct{}
	states chan raft.ReadState
	seq    uint64 // owned by loop

	mu       sync.Mutex
	next     *readBatch   // gathering readers
	inflight *readBatch   // its ReadIndex is out
	waiting  []*readBatch // index known, waiting for apply
	applied  uint64
}

type readBatch struct {
	done  chan struct{}
	once  sync.Once
	index uint64
	err   error
}

func (b *readBatch) finish(err error) {
	b.once.Do(func() {
		b.err = err
		close(b.done)
	})
}

func (r *readIndex) init(n *Node) {
	r.n = n
	r.kick = make(chan struct{}, 1)
	r.states = make(chan raft.ReadState, 64)
	r.applied = n.applied.Load()
}

func (r *readIndex) join() *readBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = &readBatch{done: make(chan struct{})}
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return r.next
}

// answered is called by the run loop with the ReadStates of a Ready.
func (r *readIndex) answered(states []raft.ReadState) {
	for _, st := range states {
		select {
		case r.states <- st:
		default: // a stale answer nobody waits for any more
		}
	}
}

// appliedTo is called by the applier after each apply.
func (r *readIndex) appliedTo(index uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.applied = index
	keep := r.waiting[:0]
	for _, b := range r.waiting {
		if b.index <= index {
			b.finish(nil)
		} else {
			keep = append(keep, b)
		}
	}
	r.waiting = keep
}

// failAll fails every pending barrier (the member lost leadership, or
// stopped).
func (r *readIndex) failAll(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range append(r.waiting, r.next, r.inflight) {
		if b != nil {
			b.finish(err)
		}
	}
	r.waiting, r.next, r.inflight = nil, nil, nil
}

func (r *readIndex) loop() {
	for {
		select {
		case <-r.n.done:
			return
		case <-r.kick:
		}
		r.mu.Lock()
		b := r.next
		r.next, r.inflight = nil, b
		r.mu.Unlock()
		if b == nil {
			continue
		}
		index, err := r.round()
		r.mu.Lock()
		r.inflight = nil
		switch {
		case err != nil:
			b.finish(err)
		case index <= r.applied:
			b.finish(nil)
		default:
			b.index = index
			r.waiting = append(r.waiting, b)
		}
		r.mu.Unlock()
	}
}

// round runs one ReadIndex request and returns the commit index it
// confirmed. It gives up after an election timeout.
func (r *readIndex) round() (uint64, error) {
	r.seq++
	rctx := binary.BigEndian.AppendUint64(nil, r.seq)
	ctx, cancel := context.WithTimeout(context.Background(), 20*r.n.cfg.Tick+time.Second)
	defer cancel()
	if err := r.n.rn.ReadIndex(ctx, rctx); err != nil {
		return 0, r.n.translate(err)
	}
	for {
		select {
		case st := <-r.states:
			if bytes.Equal(st.RequestCtx, rctx) {
				return st.Index, nil
			}
		case <-ctx.Done():
			return 0, ErrNotLeader
		case <-r.n.done:
			return 0, r.n.stopErr()
		}
	}
}
