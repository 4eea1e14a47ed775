package metaserver

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	sm "github.com/stratafs/strata/internal/statemachine"
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
// heartbeats, and not replicated. Workers heartbeat to every member of the
// group, and every member records them, so that a member elected leader
// knows the live workers already (docs/ha.md, "Workers"); only the leader
// answers with deleted blocks to drop.
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
	w := r.seenLocked(info, now)
	n := min(len(w.dropped), droppedPerHeartbeat)
	out := slices.Clone(w.dropped[:n])
	w.dropped = w.dropped[n:]
	return out
}

// seen records that worker info is live, as a follower does: the blocks
// queued for it (by this member when it led) stay queued.
func (r *workerRegistry) seen(info *pb.WorkerInfo, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seenLocked(info, now)
}

func (r *workerRegistry) seenLocked(info *pb.WorkerInfo, now time.Time) *liveWorker {
	if r.mu.workers == nil {
		r.mu.workers = map[string]*liveWorker{}
	}
	w := r.mu.workers[info.Id]
	if w == nil {
		w = &liveWorker{}
		r.mu.workers[info.Id] = w
	}
	w.info, w.seen = proto.Clone(info).(*pb.WorkerInfo), now
	return w
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

// heartbeat records a worker's heartbeat. Every member records the
// worker; a follower then answers NOT_LEADER, naming the leader, and the
// leader answers with what the worker is to trust (the keys of the block
// tokens, the namespaces whose buckets it may open) and the deleted blocks
// it is to drop.
func (m *Member) heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	if err := m.tokens.RequireSuperuser(ctx, nil, "register a worker"); err != nil {
		return nil, err
	}
	w := r.GetWorker()
	if w.GetId() == "" || w.GetAddress() == "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "heartbeat: a worker needs an id and an address")
	}
	if !m.core.IsLeader() {
		m.workers.seen(w, m.core.Now())
		return nil, m.core.NotLeader()
	}
	resp := &pb.HeartbeatResponse{IntervalSeconds: uint32(heartbeatInterval / time.Second)}
	var err error
	if resp.BlockKeys, err = m.blocks.Keys(ctx); err != nil {
		return nil, err
	}
	if err := m.core.Applied(func(r kv.Reader) error {
		list, err := sm.Namespaces(r)
		for _, ns := range list {
			if !ns.InTrash() {
				resp.Namespaces = append(resp.Namespaces, &pb.NamespaceInfo{Name: ns.Name,
					Mode: pb.NamespaceMode(ns.Mode), StoreUri: ns.StoreURI})
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	resp.Dropped = m.workers.heartbeat(w, m.core.Now())
	return resp, nil
}

// liveWorkers answers ListWorkers. Only the leader answers, so that a
// client is not given the view of a member cut off from the workers.
func (m *Member) liveWorkers() (*pb.ListWorkersResponse, error) {
	if !m.core.IsLeader() {
		return nil, m.core.NotLeader()
	}
	return &pb.ListWorkersResponse{Workers: m.workers.live(m.core.Now())}, nil
}
