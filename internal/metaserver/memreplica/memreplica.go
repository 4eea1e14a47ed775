// Package memreplica is the test kit of the namespace service's parts: an
// in-memory stand-in for a member's replica, its state a kv.Mem and every
// proposal applied at once by the state machine, as the one member of a
// group would apply it; no Raft, no disk, no goroutine. The parts (auth,
// membership, upkeep) are tested over it, each through the narrow
// interface it owns, which Replica satisfies.
package memreplica

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Replica applies what is proposed to its state at once. It is safe for
// concurrent use.
type Replica struct {
	Machine *statemachine.Machine
	// OnApplied, if set, hears what each proposal changed, before its
	// answer, as a member's parts do.
	OnApplied func(statemachine.Applied)
	leader    atomic.Bool
	clock     atomic.Int64 // ms since the epoch
	mu        sync.RWMutex
	state     *kv.Mem
	index     uint64 // of the last entry applied
}

// New returns a replica that leads, with an empty state but for namespace
// "default" (made by the superuser of cfg), its clock at now.
func New(cfg statemachine.Config, now time.Time) *Replica {
	r := &Replica{Machine: statemachine.New(cfg), state: kv.NewMem()}
	r.leader.Store(true)
	r.clock.Store(now.UnixMilli())
	_, err := r.Propose(context.Background(), statemachine.CreateNamespace.Command(&pb.CreateNamespaceRequest{
		Header: &pb.Header{User: cfg.Superuser}, Namespace: &pb.NamespaceInfo{Name: statemachine.DefaultNamespace,
			Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file:///nowhere"}}))
	if err != nil {
		panic(err)
	}
	return r
}

// SetLeader makes the replica lead or follow.
func (r *Replica) SetLeader(leads bool) { r.leader.Store(leads) }

// Advance moves the replica's clock.
func (r *Replica) Advance(d time.Duration) { r.clock.Add(d.Milliseconds()) }

// Applied runs fn against the state.
func (r *Replica) Applied(fn func(kv.Reader) error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fn(r.state)
}

// Propose applies cmd, stamped with the clock and the settings, as one
// entry; the error is the command's answer if it failed. A replica that
// does not lead refuses, as a member's does.
func (r *Replica) Propose(_ context.Context, cmd *pb.Command) (statemachine.Result, error) {
	if !r.IsLeader() {
		return statemachine.Result{}, r.NotLeader()
	}
	cmd = proto.CloneOf(cmd)
	cmd.Now, cmd.Settings = r.Now().UnixMilli(), r.Machine.Settings()
	data, err := proto.Marshal(cmd)
	if err != nil {
		return statemachine.Result{}, err
	}
	r.mu.Lock()
	r.index++
	tx := kv.NewOverlay(r.state)
	out, err := r.Machine.ApplyEntries(tx, []*raftpb.Entry{{Index: proto.Uint64(r.index), Term: proto.Uint64(1), Data: data}})
	if err == nil {
		tx.ApplyTo(r.state)
	}
	r.mu.Unlock()
	if err != nil {
		return statemachine.Result{}, err
	}
	if r.OnApplied != nil {
		r.OnApplied(out)
	}
	res := out.Answers[0].Results[0]
	return res, res.Err
}

// IsLeader reports whether the replica leads.
func (r *Replica) IsLeader() bool { return r.leader.Load() }

// NotLeader is the answer of a replica that does not lead: it knows of
// no leader.
func (r *Replica) NotLeader() error { return fserr.NotLeader("") }

// Now is the replica's clock.
func (r *Replica) Now() time.Time { return time.UnixMilli(r.clock.Load()) }

// IsSuperuser reports whether c bypasses permission checks.
func (r *Replica) IsSuperuser(c statemachine.Caller) bool { return r.Machine.IsSuperuser(c) }
