package metaserver

import (
	"context"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// requestMemory is how long the answer of an applied request is kept for
// its retries; clients give up retrying well before.
const requestMemory = 10 * time.Minute

// forgetRequests drops up to limit kept answers of the minutes before the
// one of time before.
func forgetRequests(tx kv.Txn, before int64, limit int) (int, error) {
	start, end := kvschema.RequestRange(before)
	var keys [][]byte
	err := tx.Scan(start, end, func(k, _ []byte) bool {
		keys = append(keys, append([]byte(nil), k...))
		return len(keys) < limit
	})
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		tx.Delete(k)
	}
	return len(keys), nil
}

// ForgetRequests drops the answers kept for longer than requestMemory, in
// bounded commands; the leader runs it every minute.
func (s *Server) ForgetRequests(ctx context.Context) error {
	const batch = 10000
	before := s.cfg.Clock().Add(-requestMemory).UnixMilli()
	for s.isLeader() {
		var pending bool
		start, end := kvschema.RequestRange(before)
		if err := s.store.View(func(r kv.Reader) error {
			return r.Scan(start, end, func(_, _ []byte) bool { pending = true; return false })
		}); err != nil || !pending {
			return err
		}
		if _, err := s.propose(ctx, &pb.Command{Op: &pb.Command_ForgetRequests{
			ForgetRequests: &pb.ForgetRequestsCommand{Before: before, Limit: batch}}}); err != nil {
			return err
		}
	}
	return nil
}
