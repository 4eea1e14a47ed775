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
	info *pb.WorkerInfo
	seen time.Time
}

func (r *workerRegistry) heartbeat(info *pb.WorkerInfo, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.workers == nil {
		r.mu.workers = map[string]*liveWorker{}
	}
	r.mu.workers[info.Id] = &liveWorker{info: proto.Clone(info).(*pb.WorkerInfo), seen: now}
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
func (s *Server) Heartbeat(_ context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	w := r.GetWorker()
	if w.GetId() == "" || w.GetAddress() == "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "heartbeat: a worker needs an id and an address")
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	s.workers.heartbeat(w, s.cfg.Clock())
	return &pb.HeartbeatResponse{IntervalSeconds: uint32(heartbeatInterval / time.Second)}, nil
}

// ListWorkers implements MetaService.
// The registry is the leader's: workers heartbeat to the leader they find.
func (s *Server) ListWorkers(context.Context, *pb.ListWorkersRequest) (*pb.ListWorkersResponse, error) {
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	return &pb.ListWorkersResponse{Workers: s.workers.live(s.cfg.Clock())}, nil
}
