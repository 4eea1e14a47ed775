package metaserver

import (
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// What a member tells of itself, for its metrics and its status page
// (internal/metrics, internal/statuspage): what it does as it does it,
// through the Observer it is given, and what it holds when asked
// (Report). Neither imports a metrics library.

// Observer hears what a member does. Its methods are called on the
// service's hot paths, concurrently, and must not block.
type Observer interface {
	// Op is a call of an operation of the state machine's table, made
	// alone or in a Batch, answered after d (in a batch: the batch's time
	// to that answer); err is its failure, an fserr condition (nil: none).
	Op(name string, d time.Duration, err error)
	// Proposed is one entry of commands commands handed to Raft.
	Proposed(commands int)
	// Applied is one batch of entries applied to the state.
	Applied(entries int)
	// LeaderChanged is this member learning that lead leads (0: none).
	LeaderChanged(lead uint64, isLeader bool)
	// Snapshot is a snapshot of bytes sent to a member ("sent") or
	// received and restored ("restored"), which took d, and failed with
	// err (nil: it did not).
	Snapshot(kind string, bytes int64, d time.Duration, err error)
}

// The kinds of Observer.Snapshot.
const (
	SnapshotSent     = "sent"
	SnapshotRestored = "restored"
)

// noObserver hears nothing: a member's Observer when its Config has none.
type noObserver struct{}

func (noObserver) Op(string, time.Duration, error)              {}
func (noObserver) Proposed(int)                                 {}
func (noObserver) Applied(int)                                  {}
func (noObserver) LeaderChanged(uint64, bool)                   {}
func (noObserver) Snapshot(string, int64, time.Duration, error) {}

// Report is what a member holds and knows, as of when it was made.
type Report struct {
	// Status is the member's view of the group, as Status answers it
	// (the leader's has each member's match index and progress).
	Status *pb.StatusResponse
	// Store is the state store's figures (pebble's and its hot cache's).
	Store pebblekv.Stats
	// Usage is what the applied state holds, as GetServerStatus answers it
	// but read without a barrier (a follower's may lag); nil if it could
	// not be read, and then UsageErr says why.
	Usage    *pb.GetServerStatusResponse
	UsageErr error
	// Workers are those heard from recently, with the figures of their
	// last heartbeat.
	Workers []*pb.WorkerInfo
	// Leaders are the latest leader changes this member saw, oldest first.
	Leaders []LeaderChange
	// Snapshot is the size of the last snapshot this member made for
	// another or restored (0: none since it started).
	SnapshotBytes int64
}

// LeaderChange is a change of leader as one member saw it.
type LeaderChange struct {
	At     time.Time
	Leader uint64 // 0: none known
	Term   uint64
}

// Report returns what the member holds and knows now. It reads the
// applied state (the namespaces' usage, the leases) and pebble's figures:
// for a scrape or a page, not for every request.
func (m *Member) Report() Report {
	r := Report{Status: m.status(), Store: m.core.store.Stats(), Workers: m.workers.live(m.core.Now()),
		Leaders: m.core.leaders.list(), SnapshotBytes: m.core.snapshotBytes.Load()}
	var resp *pb.GetServerStatusResponse
	err := m.core.Applied(func(rd kv.Reader) error {
		out, err := m.core.machine.Read(sm.GetServerStatus.Op, rd, &pb.GetServerStatusRequest{})
		if err == nil {
			resp = out.(*pb.GetServerStatusResponse)
		}
		return err
	})
	if err == nil {
		resp.Version, resp.Started, resp.LiveWorkers = Version, m.started.UnixMilli(), uint32(len(r.Workers))
	}
	r.Usage, r.UsageErr = resp, err
	return r
}

// maxLeaderChanges bounds the leader changes a member remembers.
const maxLeaderChanges = 32

// leaderLog is the latest leader changes a member saw.
type leaderLog struct {
	mu      sync.Mutex
	changes []LeaderChange
}

func (l *leaderLog) add(c LeaderChange) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.changes) == maxLeaderChanges {
		l.changes = append(l.changes[:0], l.changes[1:]...)
	}
	l.changes = append(l.changes, c)
}

func (l *leaderLog) list() []LeaderChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LeaderChange(nil), l.changes...)
}

// dirBytes is the bytes of the regular files under dir (a checkpoint's,
// whose files are hard links of the state's: what a snapshot sends).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
