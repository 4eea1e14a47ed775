package metaserver

import (
	"fmt"

	raftpb "go.etcd.io/raft/v3/raftpb"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
)

// Apply implements raftnode.StateMachine: it applies a run of committed
// entries through the state machine as one atomic batch (one commit however
// many entries), tells the rest of the member what they changed, then
// answers their proposals.
func (r *replica) Apply(entries []*raftpb.Entry) error {
	for len(entries) > 0 && entries[0].GetIndex() <= r.applied.Load() {
		entries = entries[1:] // applied before a restart, or in a restored snapshot
	}
	for len(entries) > 0 {
		n, err := r.applyRun(entries)
		if err != nil {
			return err
		}
		entries = entries[n:]
	}
	return nil
}

// applyRun applies entries as one batch, up to and including the first
// that ingests tables (a committed import: the batch is committed with
// them, in one step), and returns how many it applied.
func (r *replica) applyRun(entries []*raftpb.Entry) (int, error) {
	group := kv.NewOverlay(r.store.Writer())
	out, err := r.machine.ApplyEntries(group, entries)
	if err != nil {
		return 0, err
	}
	if out.Ingest != nil {
		err = r.ingest(out.Ingest, group)
	} else {
		err = r.store.Commit(group, false)
	}
	if err != nil {
		return 0, err
	}
	r.applied.Store(entries[out.Consumed-1].GetIndex())
	if out.MembersChanged {
		if err := r.loadMembers(); err != nil {
			return 0, err
		}
	}
	// Before the answers: a new token works at once, a revoked one never
	// again, a new namespace is known in the mode it was created in.
	r.events.applied(out)
	for _, a := range out.Answers {
		r.deliver(a.ID, a.Results)
	}
	for _, id := range out.Removed {
		if id == r.cfg.MemberID {
			r.node.Fail(fmt.Errorf("member %d was removed from the group", r.cfg.MemberID))
		}
	}
	return out.Consumed, nil
}

// Sync implements raftnode.StateMachine.
func (r *replica) Sync() error { return r.store.Sync() }

// Checkpoint implements raftnode.StateMachine.
func (r *replica) Checkpoint(dir string) error { return r.store.Checkpoint(dir) }

// Restore implements raftnode.StateMachine: the state becomes the received
// checkpoint, with its applied index and membership.
func (r *replica) Restore(dir string) error {
	if err := r.store.Replace(dir); err != nil {
		return err
	}
	if err := r.loadState(); err != nil {
		return err
	}
	r.events.applied(statemachine.Applied{MembersChanged: true, Namespaces: true, Tokens: true})
	return nil
}
