package raftnode

import (
	"sync/atomic"

	pb "go.etcd.io/raft/v3/raftpb"
)

// Cut is a Sender with links that can be cut, for tests of whole services
// (internal/metaserver's, over the gRPC Transport): it passes a node's
// messages on to the Sender it wraps, but loses those its filter says so,
// as a cut link would. Installed on every member, it cuts a member off both
// ways with one filter, each message being lost at its sender. Lost
// snapshots are lost silently, as on a real network.
type Cut struct {
	next Sender
	drop atomic.Pointer[func(from, to uint64) bool]
}

// NewCut returns next with no link cut.
func NewCut(next Sender) *Cut { return &Cut{next: next} }

// Set cuts the links for which drop returns true; nil restores them all.
func (c *Cut) Set(drop func(from, to uint64) bool) {
	if drop == nil {
		c.drop.Store(nil)
		return
	}
	c.drop.Store(&drop)
}

// Send implements Sender.
func (c *Cut) Send(msgs []*pb.Message) {
	f := c.drop.Load()
	if f == nil {
		c.next.Send(msgs)
		return
	}
	kept := make([]*pb.Message, 0, len(msgs))
	for _, m := range msgs {
		if !(*f)(m.GetFrom(), m.GetTo()) {
			kept = append(kept, m)
		}
	}
	c.next.Send(kept)
}
