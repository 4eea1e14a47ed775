package cachemode

import (
	"sync/atomic"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// progress is how far the bucket side of one operation on a path has got:
// the objects a rename or delete of a directory copied or deleted, of about
// total. Clients poll it (GetProgress) to draw a progress bar.
type progress struct {
	operation   atomic.Pointer[string]
	done, total atomic.Uint64
}

type progressKey struct{ ns, path string }

// track registers the progress of an operation on path until the returned
// func is called; total is the objects expected.
func (c *call) track(path string, total uint64) (*progress, func()) {
	p := &progress{}
	p.total.Store(total)
	k := progressKey{c.ns.Name, path}
	c.mu.Lock()
	c.mu.progress[k] = p
	c.mu.Unlock()
	return p, func() {
		c.mu.Lock()
		if c.mu.progress[k] == p {
			delete(c.mu.progress, k)
		}
		c.mu.Unlock()
	}
}

func (p *progress) step(operation string) {
	if p == nil {
		return
	}
	if cur := p.operation.Load(); cur == nil || *cur != operation {
		p.operation.Store(&operation)
	}
	p.done.Add(1)
}

// Progress reports the operation under way on path of namespace ns, if any.
func (m *Mode) Progress(ns, path string) *pb.GetProgressResponse {
	m.mu.Lock()
	p := m.mu.progress[progressKey{ns, path}]
	m.mu.Unlock()
	if p == nil {
		return &pb.GetProgressResponse{}
	}
	resp := &pb.GetProgressResponse{Running: true, Done: p.done.Load(), Total: p.total.Load()}
	if op := p.operation.Load(); op != nil {
		resp.Operation = *op
	}
	return resp
}
