package metaserver

import (
	"context"

	"google.golang.org/protobuf/proto"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// propose stamps cmd with an id, the time and the namespace settings, puts
// it in the log and waits until it is applied, returning what applying it
// produced.
func (s *Server) propose(ctx context.Context, cmd *pb.Command) (any, error) {
	cmd.Id = s.nextProposal.Add(1)
	cmd.Now = s.cfg.Clock().UnixMilli()
	cmd.Settings = s.settings
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	ch := s.wait(cmd.Id)
	defer s.unwait(cmd.Id)
	if err := s.node.Propose(ctx, data); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.val, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.node.Done():
		return nil, s.nodeStopped()
	}
}

// wait registers a waiter for the result of proposal id.
func (s *Server) wait(id uint64) chan result {
	ch := make(chan result, 1)
	s.waitMu.Lock()
	s.waiters[id] = ch
	s.waitMu.Unlock()
	return ch
}

func (s *Server) unwait(id uint64) {
	s.waitMu.Lock()
	delete(s.waiters, id)
	s.waitMu.Unlock()
}

func (s *Server) deliver(id uint64, r result) {
	s.waitMu.Lock()
	ch := s.waiters[id]
	s.waitMu.Unlock()
	if ch != nil {
		select {
		case ch <- r:
		default: // failed already (leadership lost); the client retries
		}
	}
}

func (s *Server) failWaiters(err error) {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	for id, ch := range s.waiters {
		select {
		case ch <- result{err: err}:
		default:
		}
		delete(s.waiters, id)
	}
}
