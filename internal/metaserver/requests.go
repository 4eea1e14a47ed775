package metaserver

import (
	"context"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// ForgetRequests drops the answers kept for longer than
// statemachine.RequestMemory, in bounded commands; the leader runs it every
// minute.
func (s *Server) ForgetRequests(ctx context.Context) error {
	const batch = 10000
	before := s.cfg.Clock().Add(-statemachine.RequestMemory).UnixMilli()
	for s.isLeader() {
		var pending bool
		if err := s.store.View(func(r kv.Reader) (err error) {
			pending, err = statemachine.RequestsBefore(r, before)
			return err
		}); err != nil || !pending {
			return err
		}
		cmd := statemachine.ForgetRequests.Command(&pb.ForgetRequestsCommand{Before: before, Limit: batch})
		if _, err := s.propose(ctx, cmd); err != nil {
			return err
		}
	}
	return nil
}
