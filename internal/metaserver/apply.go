package metaserver

import (
	"fmt"
	"time"

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
	if len(entries) == 0 {
		return nil
	}
	group := kv.NewOverlay(r.store.Writer())
	out, err := r.machine.ApplyEntries(group, entries)
	if err != nil {
		return err
	}
	if err := r.store.Commit(group, false); err != nil {
		return err
	}
	r.applied.Store(entries[len(entries)-1].GetIndex())
	r.obs.Applied(len(entries))
	if out.MembersChanged {
		if err := r.loadMembers(); err != nil {
			return err
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
	return nil
}

// Sync implements raftnode.StateMachine.
func (r *replica) Sync() error { return r.store.Sync() }

// Checkpoint implements raftnode.StateMachine.
func (r *replica) Checkpoint(dir string) error { return r.store.Checkpoint(dir) }

// checkpoint is the transport's: a checkpoint for a snapshot to send,
// whose size the snapshot's report (snapshotSent) gives.
func (r *replica) checkpoint(dir string) error {
	err := r.store.Checkpoint(dir)
	if err == nil {
		r.snapshotBytes.Store(dirBytes(dir))
	}
	return err
}

// snapshotSent tells the observer how a snapshot sent to a member went.
func (r *replica) snapshotSent(_ uint64, took time.Duration, err error) {
	r.obs.Snapshot(SnapshotSent, r.snapshotBytes.Load(), took, err)
}

// Restore implements raftnode.StateMachine: the state becomes the received
// checkpoint, with its applied index and membership.
func (r *replica) Restore(dir string) error {
	start, size := time.Now(), dirBytes(dir)
	err := r.restore(dir)
	r.snapshotBytes.Store(size)
	r.obs.Snapshot(SnapshotRestored, size, time.Since(start), err)
	return err
}

func (r *replica) restore(dir string) error {
	if err := r.store.Replace(dir); err != nil {
		return err
	}
	if err := r.loadState(); err != nil {
		return err
	}
	r.events.applied(statemachine.Applied{MembersChanged: true, Namespaces: true, Tokens: true})
	return nil
}
