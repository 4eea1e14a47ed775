package metaserver

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Workers heartbeat every heartbeatInterval and count as live until
// workerTimeout has passed without one.
const (
	heartbeatInterval = time.Second
	workerTimeout     = 5 * time.Second
)

// maxDropped bounds the deleted blocks queued for one worker to drop from
// its cache; past it the oldest are forgotten, and their pages leave the
// cache by eviction instead. A heartbeat's answer carries at most
// droppedPerHeartbeat of them.
const (
	maxDropped          = 100_000
	droppedPerHeartbeat = 10_000
)

// workerRegistry knows the live workers. It is soft state, rebuilt from
// heartbeats, and not replicated: a new leader learns the workers within one
// heartbeat.
type workerRegistry struct {
	mu struct {
		sync.Mutex
		workers map[string]*liveWorker
	}
}

type liveWorker struct {
	info    *pb.WorkerInfo
	seen    time.Time
	dropped []*pb.BlockRef // deleted blocks the worker has not heard of
}

// heartbeat records that worker info is live, and returns deleted blocks
// for it to drop from its cache.
func (r *workerRegistry) heartbeat(info *pb.WorkerInfo, now time.Time) []*pb.BlockRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.workers == nil {
		r.mu.workers = map[string]*liveWorker{}
	}
	w := r.mu.workers[info.Id]
	if w == nil {
		w = &liveWorker{}
		r.mu.workers[info.Id] = w
	}
	w.info, w.seen = proto.Clone(info).(*pb.WorkerInfo), now
	n := min(len(w.dropped), droppedPerHeartbeat)
	out := slices.Clone(w.dropped[:n])
	w.dropped = w.dropped[n:]
	return out
}

// drop queues deleted blocks for every live worker to drop from its cache.
// NB: the queue is the leader's, in memory; a worker that misses it (a new
// leader, a worker that was away) keeps the pages until it evicts them.
func (r *workerRegistry) drop(refs []*pb.BlockRef) {
	if len(refs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.mu.workers {
		w.dropped = append(w.dropped, refs...)
		if over := len(w.dropped) - maxDropped; over > 0 {
			w.dropped = slices.Clone(w.dropped[over:])
		}
	}
}

// live returns the workers heard from recently, sorted by id.
func (r *workerRegistry) live(now time.Time) []*pb.WorkerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*pb.WorkerInfo
	for id, w := range r.mu.workers {
		if now.Sub(w.seen) > workerTimeout {
			delete(r.mu.workers, id)
			continue
		}
		out = append(out, w.info)
	}
	slices.SortFunc(out, func(a, b *pb.WorkerInfo) int { return strings.Compare(a.Id, b.Id) })
	return out
}

// Heartbeat implements MetaService.
// Workers are the cluster's own: their tokens must be a superuser's.
func (s *Server) Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	if err := s.superuser(ctx, nil, "register a worker"); err != nil {
		return nil, err
	}
	w := r.GetWorker()
	if w.GetId() == "" || w.GetAddress() == "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "heartbeat: a worker needs an id and an address")
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	dropped := s.workers.heartbeat(w, s.cfg.Clock())
	return &pb.HeartbeatResponse{IntervalSeconds: uint32(heartbeatInterval / time.Second), Dropped: dropped}, nil
}

// ListWorkers implements MetaService.
// The registry is the leader's: workers heartbeat to the leader they find.
func (s *Server) ListWorkers(context.Context, *pb.ListWorkersRequest) (*pb.ListWorkersResponse, error) {
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	return &pb.ListWorkersResponse{Workers: s.workers.live(s.cfg.Clock())}, nil
}
