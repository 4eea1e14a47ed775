package metaserver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/object/objstore"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// leases tracks when each lease holder last renewed. Renewals are not
// replicated (as in HDFS, they would flood the log): the times live in the
// leader's memory, and a member that becomes leader, or restarts, starts
// every holder's clock afresh, which only ever extends a lease.
//
// Past the soft limit another writer may take a file over; past the hard
// limit the leader closes the file on its own (its lease check job). A file
// closed without its writer has its flushed tail made a block first
// (tail.go).
type leases struct {
	core       *replica
	stores     *objstore.Set
	log        *slog.Logger
	soft, hard time.Duration
	mu         struct {
		sync.Mutex
		renewed map[string]time.Time
	}
}

func newLeases(core *replica, stores *objstore.Set, cfg Config) *leases {
	l := &leases{core: core, stores: stores, log: cfg.Log, soft: cfg.LeaseSoftLimit, hard: cfg.LeaseHardLimit}
	l.mu.renewed = map[string]time.Time{}
	return l
}

// restart starts every holder's clock afresh, from the leases in the state.
func (m *leases) restart() error {
	renewed := map[string]time.Time{}
	now := m.core.Now()
	err := m.core.Applied(func(r kv.Reader) error {
		return sm.Leases(r, func(holder string, _ uint64) bool {
			renewed[holder] = now
			return true
		})
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.renewed = renewed
	return err
}

func (m *leases) renew(holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.renewed[holder] = m.core.Now()
}

// expired reports whether holder has not renewed for longer than limit.
func (m *leases) expired(holder string, limit time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.mu.renewed[holder]
	return !ok || m.core.Now().Sub(last) > limit
}

// expiredHolders returns the holders past the hard limit.
func (m *leases) expiredHolders() []string {
	now := m.core.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for h, last := range m.mu.renewed {
		if now.Sub(last) > m.hard {
			out = append(out, h)
		}
	}
	return out
}

func (m *leases) forget(holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.renewed, holder)
}

// check recovers the files of every holder past the hard limit: the
// leader's lease check job; other members leave leases to the leader.
func (m *leases) check(ctx context.Context) error {
	if !m.core.IsLeader() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, holder := range m.expiredHolders() {
		if err := m.expireHolder(ctx, holder); err != nil {
			return err
		}
		m.forget(holder)
	}
	return nil
}

// expireHolder closes every file holder still writes.
func (m *leases) expireHolder(ctx context.Context, holder string) error {
	var inodes []uint64
	err := m.core.Applied(func(r kv.Reader) error {
		start, end := kvschema.LeaseRange(holder)
		return r.Scan(start, end, func(k, _ []byte) bool {
			if _, ino, err := kvschema.DecodeLeaseKey(k); err == nil {
				inodes = append(inodes, ino)
			}
			return true
		})
	})
	for _, ino := range inodes {
		if err != nil {
			break
		}
		m.log.Info("lease expired; closing file", "holder", holder, "inode", ino)
		err = m.expire(ctx, holder, ino)
	}
	return err
}

// takeOverExpired closes the file at r.Path if its writer's lease is past
// the soft limit, and reports whether it did.
func (m *leases) takeOverExpired(ctx context.Context, r *pb.CreateRequest) bool {
	var holder string
	var ino uint64
	h := r.GetHeader()
	err := m.core.View(ctx, func(rd kv.Reader) (err error) {
		ino, holder, err = m.core.machine.Writer(rd, sm.CallerOf(h), h.GetNamespace(), r.GetPath())
		return err
	})
	if err != nil || holder == "" || holder == h.GetClientName() || !m.expired(holder, m.soft) {
		return false
	}
	return m.expire(ctx, holder, ino) == nil
}

// renewLease answers RenewLease: only the leader keeps renewals.
func (m *Member) renewLease(ctx context.Context, r *pb.RenewLeaseRequest) (*pb.RenewLeaseResponse, error) {
	if err := m.tokens.CheckCaller(ctx, r.GetHeader()); err != nil {
		return nil, err
	}
	if !m.core.IsLeader() {
		return nil, m.core.NotLeader()
	}
	m.leases.renew(r.GetHeader().GetClientName())
	return &pb.RenewLeaseResponse{}, nil
}
