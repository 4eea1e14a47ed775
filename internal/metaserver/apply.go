package metaserver

import (
	"fmt"

	raftpb "go.etcd.io/raft/v3/raftpb"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
)

// Apply implements raftnode.StateMachine: it applies a run of committed
// entries through the state machine as one atomic batch (one commit however
// many entries), then answers their proposals and kicks the background work
// they left.
func (s *Server) Apply(entries []*raftpb.Entry) error {
	for len(entries) > 0 && entries[0].GetIndex() <= s.applied.Load() {
		entries = entries[1:] // applied before a restart, or in a restored snapshot
	}
	if len(entries) == 0 {
		return nil
	}
	group := kv.NewOverlay(s.store.Writer())
	out, err := s.machine.ApplyEntries(group, entries)
	if err != nil {
		return err
	}
	if err := s.store.Commit(group, false); err != nil {
		return err
	}
	s.applied.Store(entries[len(entries)-1].GetIndex())
	if out.MembersChanged {
		if err := s.loadMembers(); err != nil {
			return err
		}
	}
	if out.Tokens {
		s.tokensChanged() // before the answers: a new token works at once, a revoked one never again
	}
	for _, a := range out.Answers {
		s.deliver(a.ID, a.Results)
	}
	for _, id := range out.Removed {
		if id == s.cfg.MemberID {
			s.node.Fail(fmt.Errorf("member %d was removed from the group", s.cfg.MemberID))
		}
	}
	if out.Purge {
		s.kickPurge()
	}
	if out.Collect {
		s.kickGC()
	}
	if out.Namespaces {
		s.namespacesChanged()
	}
	return nil
}

// Sync implements raftnode.StateMachine.
func (s *Server) Sync() error { return s.store.Sync() }

// Checkpoint implements raftnode.StateMachine.
func (s *Server) Checkpoint(dir string) error { return s.store.Checkpoint(dir) }

// Restore implements raftnode.StateMachine: the state becomes the received
// checkpoint, with its applied index and membership.
func (s *Server) Restore(dir string) error {
	if err := s.store.Replace(dir); err != nil {
		return err
	}
	applied, err := statemachine.AppliedIndex(s.store.Writer())
	if err != nil {
		return err
	}
	s.applied.Store(applied)
	s.namespacesChanged()
	s.tokensChanged()
	return s.loadMembers()
}
