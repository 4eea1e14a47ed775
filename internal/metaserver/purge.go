package metaserver

import (
	"context"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// kickPurge wakes the purger after a delete detached a subtree.
func (s *Server) kickPurge() {
	select {
	case s.purgeCh <- struct{}{}:
	default:
	}
}

// PurgeAll runs purge commands until nothing detached is left. The leader
// runs it in the background, so that a huge recursive delete is removed in
// bounded commands, one after the other, and never holds the log for long.
func (s *Server) PurgeAll(ctx context.Context) error {
	for s.isLeader() {
		var pending bool
		if err := s.store.View(func(r kv.Reader) (err error) {
			pending, err = namespace.PurgePending(r)
			return err
		}); err != nil || !pending {
			return err
		}
		select {
		case <-s.stop:
			return nil
		default:
		}
		if _, err := s.propose(ctx, statemachine.Purge.Command(&pb.PurgeCommand{Limit: uint32(s.cfg.PurgeBatch)})); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) isLeader() bool {
	_, leader := s.node.Leader()
	return leader
}

func (s *Server) nodeStopped() error {
	if err := s.node.Err(); err != nil {
		return err
	}
	return raftnode.ErrStopped
}
