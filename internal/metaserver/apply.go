package metaserver

import (
	"fmt"
	"slices"
	"time"

	raftpb "go.etcd.io/raft/v3/raftpb"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
)

// Apply implements raftnode.StateMachine: it applies a run of committed
// entries through the state machine as one atomic batch (one commit however
// many entries), tells the rest of the member what they changed, then
// answers their proposals.
//
// A run of volatile entries only (hflushes: volatileEntry) is not written
// to the store: its effects join those held in memory (pending), which
// every read sees, until the log is synced (Durable) or a durable entry
// is applied, whose commit writes them too. So the store never holds the
// effect of an entry the log may lose to a power cut, which a member
// replaying its log after one would not apply again.
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
	pending := r.pending.Load()
	var base kv.Reader = r.store.Writer()
	if pending != nil {
		base = pending
	}
	group := kv.NewOverlay(base)
	out, err := r.machine.ApplyEntries(group, entries)
	if err != nil {
		return 0, err
	}
	applied := entries[:out.Consumed]
	if out.Ingest != nil {
		err = r.ingest(out.Ingest, group)
	} else {
		err = r.keep(group, !slices.ContainsFunc(applied, durableEntry))
	}
	if err != nil {
		return 0, err
	}
	r.applied.Store(applied[len(applied)-1].GetIndex())
	r.obs.Applied(len(applied))
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

// keep keeps what a run of entries wrote (group, over the pending writes if
// any): in memory with the pending writes if the run was volatile, else in
// the store, with the pending writes, in one commit.
func (r *replica) keep(group *kv.Overlay, volatile bool) error {
	pending := r.pending.Load()
	switch {
	case volatile && pending == nil:
		r.pending.Store(group) // its base is the store's writer: what it wrote, over it
		return nil
	case volatile:
		r.pendingMu.Lock()
		group.ApplyTo(pending)
		r.pendingMu.Unlock()
		return nil
	case pending == nil:
		return r.store.Commit(group, false)
	}
	r.pendingMu.Lock()
	group.ApplyTo(pending)
	r.pendingMu.Unlock()
	if err := r.store.Commit(pending, false); err != nil {
		return err
	}
	r.pending.Store(nil)
	return nil
}

// Durable implements raftnode.StateMachine: the log is synced, so what the
// volatile entries applied so far wrote goes to the store.
func (r *replica) Durable(uint64) error {
	pending := r.pending.Load()
	if pending == nil {
		return nil
	}
	if err := r.store.Commit(pending, false); err != nil {
		return err
	}
	r.pending.Store(nil)
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
	r.pending.Store(nil) // effects of entries before the snapshot's
	if err := r.loadState(); err != nil {
		return err
	}
	r.events.applied(statemachine.Applied{MembersChanged: true, Namespaces: true, Tokens: true})
	return nil
}
