package metaserver

import (
	"context"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

// leaseMonitor tracks when each lease holder last renewed. Renewals are not
// replicated (as in HDFS, they would flood the log): the times live in the
// leader's memory, and a member that becomes leader, or restarts, starts
// every holder's clock afresh, which only ever extends a lease.
type leaseMonitor struct {
	s  *Server
	mu struct {
		sync.Mutex
		renewed map[string]time.Time
	}
}

func newLeaseMonitor(s *Server) (*leaseMonitor, error) {
	m := &leaseMonitor{s: s}
	return m, m.restart()
}

// restart starts every holder's clock afresh, from the leases in the state.
func (m *leaseMonitor) restart() error {
	renewed := map[string]time.Time{}
	now := m.s.cfg.Clock()
	err := m.s.store.View(func(r kv.Reader) error {
		return namespace.Leases(r, func(holder string, _ uint64) bool {
			renewed[holder] = now
			return true
		})
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.renewed = renewed
	return err
}

func (m *leaseMonitor) renew(holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.renewed[holder] = m.s.cfg.Clock()
}

// expired reports whether holder has not renewed for longer than limit.
func (m *leaseMonitor) expired(holder string, limit time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, ok := m.mu.renewed[holder]
	return !ok || m.s.cfg.Clock().Sub(last) > limit
}

// expiredHolders returns the holders past the hard limit.
func (m *leaseMonitor) expiredHolders() []string {
	now := m.s.cfg.Clock()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for h, last := range m.mu.renewed {
		if now.Sub(last) > m.s.cfg.LeaseHardLimit {
			out = append(out, h)
		}
	}
	return out
}

func (m *leaseMonitor) forget(holder string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.renewed, holder)
}

// CheckLeases recovers the files of every holder past the hard limit. The
// service runs it every second; tests call it with an injected clock.
func (s *Server) CheckLeases(ctx context.Context) error {
	for _, holder := range s.leases.expiredHolders() {
		if err := s.expireHolder(ctx, holder); err != nil {
			return err
		}
		s.leases.forget(holder)
	}
	return nil
}

// expireHolder closes every file holder still writes.
func (s *Server) expireHolder(ctx context.Context, holder string) error {
	var inodes []uint64
	err := s.store.View(func(r kv.Reader) error {
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
		s.cfg.Log.Info("lease expired; closing file", "holder", holder, "inode", ino)
		err = s.expire(ctx, holder, ino)
	}
	return err
}

// checkLeasesAsLeader is the leader's periodic lease check; other members
// leave leases to the leader.
func (s *Server) checkLeasesAsLeader(ctx context.Context) error {
	if !s.isLeader() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.CheckLeases(ctx)
}
