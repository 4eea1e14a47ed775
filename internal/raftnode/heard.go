package raftnode

import (
	"sync"
	"sync/atomic"
)

// heardFrom keeps, per member, the tick at which a message from it last
// arrived, so that a leader can tell which members answer now. Raft's own
// Progress.RecentActive would not do: a leader resets it every election
// timeout, and a live member looks dead until its next answer.
type heardFrom struct {
	ticks atomic.Uint64
	last  sync.Map // member id → *atomic.Uint64, the tick of its last message
}

func (h *heardFrom) tick() { h.ticks.Add(1) }

func (h *heardFrom) from(id uint64) {
	v, ok := h.last.Load(id)
	if !ok {
		v, _ = h.last.LoadOrStore(id, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Store(h.ticks.Load())
}

// within reports whether member id was heard from in the last ticks ticks.
func (h *heardFrom) within(id, ticks uint64) bool {
	v, ok := h.last.Load(id)
	return ok && h.ticks.Load()-v.(*atomic.Uint64).Load() <= ticks
}

// heardWindow is how recent a message must be for its sender to count as
// answering: two election timeouts, in which a live member answers some
// twenty heartbeats.
const heardWindow = 2 * electionTicks

// HeardFrom reports whether a message from member id arrived within the
// last two election timeouts. On the leader, which heartbeats every
// member each tick, it tells the members that answer.
func (n *Node) HeardFrom(id uint64) bool { return n.heard.within(id, heardWindow) }
