package metaserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/metaserver/membership"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// replica is the core of a member: the Raft node and the state its
// committed entries are applied to. It proposes commands and waits for
// their apply (propose.go), applies the committed entries (apply.go),
// reads the applied state, with a read barrier or without, and says who
// leads. Everything else of the service goes through it: it is the auth,
// membership, upkeep and cache-mode parts' State, Node, Replica and
// Service.
type replica struct {
	cfg       Config
	machine   *statemachine.Machine
	store     *pebblekv.Store
	node      *raftnode.Node
	transport *raftnode.Transport
	members   membership.Members
	events    events
	imports   *importer

	applied      atomic.Uint64
	nextProposal atomic.Uint64
	props        proposals

	obs           Observer     // cfg.Observe
	leaders       leaderLog    // the latest leader changes
	snapshotBytes atomic.Int64 // the size of the last snapshot made or restored

	// pending holds what the volatile entries applied since the log's last
	// sync wrote, over the store (apply.go); nil: nothing. Reads see it
	// (view); pendingMu keeps them out while the applier writes it.
	pending   atomic.Pointer[kv.Overlay]
	pendingMu sync.RWMutex
}

// events are what the rest of the member hears from its replica.
type events struct {
	// applied runs once a batch of entries is committed, before the
	// answers of its commands are delivered.
	applied func(statemachine.Applied)
	// leader runs on the Raft loop when this member takes or loses the
	// lead.
	leader func(isLeader bool)
}

// newReplica opens the state in cfg.DataDir. Nothing runs until start.
func newReplica(cfg Config) (*replica, error) {
	cfg.Store.Uncached = kvschema.IsRequestKey
	store, err := pebblekv.Open(filepath.Join(cfg.DataDir, "state"), cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("metaserver: open state: %w", err)
	}
	r := &replica{cfg: cfg, machine: statemachine.New(cfg.Namespace), store: store, obs: cfg.Observe}
	r.imports = &importer{dir: filepath.Join(cfg.DataDir, "imports"), core: r, log: cfg.Log}
	r.props.waiting = map[uint64][]*proposal{}
	// Proposal ids only route answers back to waiters; a restart must not
	// reuse the ids of entries an earlier run left in the log.
	r.nextProposal.Store(cfg.MemberID<<48 | uint64(time.Now().UnixNano())&(1<<47-1))
	return r, nil
}

// start loads the membership (recording the initial one in a new state)
// and starts the Raft node with its transport, replaying whatever of the
// log the state had not applied. ev is what the rest of the member hears.
func (r *replica) start(ev events) error {
	cfg := r.cfg
	r.events = ev
	if err := r.loadState(); err != nil {
		return err
	}
	var peers []uint64
	if len(r.members.All()) == 0 && !cfg.Join {
		if err := r.bootstrapMembers(); err != nil {
			return err
		}
		for id := range cfg.InitialMembers {
			peers = append(peers, id)
		}
	}
	var err error
	r.transport, err = raftnode.NewTransport(raftnode.TransportConfig{ClusterID: cfg.ClusterID, ID: cfg.MemberID,
		Address: cfg.Address, Members: r.members.Addresses, Checkpoint: r.checkpoint,
		SnapshotDir: filepath.Join(cfg.DataDir, "snapshots"), StageDir: r.imports.dir, Staged: r.imports.received,
		Dial: tlsconf.Dial(cfg.PeerTLS), Log: cfg.Log, SnapshotSent: r.snapshotSent})
	if err != nil {
		return err
	}
	r.imports.stage = r.transport.StageFiles
	r.imports.start()
	if cfg.Join && len(r.members.All()) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.transport.CheckJoin(ctx, cfg.JoinAddresses)
		cancel()
		if err != nil {
			r.transport.Close()
			return err
		}
	}
	r.node, err = raftnode.Start(raftnode.Config{ID: cfg.MemberID, ClusterID: cfg.ClusterID, Peers: peers, Join: cfg.Join,
		Dir: filepath.Join(cfg.DataDir, "raft"), Applied: r.applied.Load(), Tick: cfg.Tick, CompactKeep: 5000,
		Transport: r.sender(), OnLeader: r.leaderChanged, Volatile: volatileEntry, Log: cfg.Log}, r)
	if err != nil {
		r.transport.Close()
		return err
	}
	r.transport.Attach(r.node)
	r.props.setLogWrite(r.node.LogWrite)
	return nil
}

// sender is what the node sends through: the transport, wrapped if the
// configuration says so.
func (r *replica) sender() raftnode.Sender {
	if r.cfg.WrapSender != nil {
		return r.cfg.WrapSender(r.transport)
	}
	return r.transport
}

// close stops the node and closes the state; the proposals still waiting
// fail. Acknowledged operations are durable already.
func (r *replica) close() error {
	if r.node != nil {
		r.node.Stop()
		r.transport.Close()
	}
	r.failWaiters(raftnode.ErrStopped)
	return r.store.Close()
}

// loadState reads what the replica keeps in memory of its state: the
// applied index and the membership.
func (r *replica) loadState() error {
	applied, err := statemachine.AppliedIndex(r.store.Writer())
	if err != nil {
		return err
	}
	r.applied.Store(applied)
	return r.loadMembers()
}

func (r *replica) loadMembers() error {
	return r.store.View(r.members.Load)
}

// bootstrapMembers records the initial members in a new state.
func (r *replica) bootstrapMembers() error {
	ov := kv.NewOverlay(r.store.Writer())
	if err := statemachine.Bootstrap(ov, r.cfg.InitialMembers); err != nil {
		return err
	}
	if err := r.store.Commit(ov, true); err != nil {
		return err
	}
	return r.loadMembers()
}

// leaderChanged runs on the Raft loop when the known leader changes.
func (r *replica) leaderChanged(lead, term uint64, isLeader bool) {
	r.leaders.add(LeaderChange{At: r.cfg.Clock(), Leader: lead, Term: term})
	r.obs.LeaderChanged(lead, isLeader)
	r.store.SetWriteThrough(isLeader) // a follower serves no reads
	if !isLeader {
		// Proposals in flight may or may not commit under the next leader;
		// their clients retry with the same request ids and learn which.
		r.failWaiters(raftnode.ErrNotLeader)
	}
	r.events.leader(isLeader)
}

// WaitReady blocks until the member can serve: it has a leader and has
// applied what was committed before it started.
func (r *replica) WaitReady(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		// The leader as this member's loop published it (what requests
		// check), not only as raft knows it.
		lead, leader := r.node.Leader()
		if lead != 0 && (lead != r.cfg.MemberID || leader) && r.applied.Load() >= r.node.Status().GetCommit() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("metaserver: not ready: %w", ctx.Err())
		case <-r.node.Done():
			return errors.Join(raftnode.ErrStopped, r.node.Err())
		case <-t.C:
		}
	}
}

// View runs fn against the applied state after a read barrier, which
// makes what it reads linearizable: only a leader that a quorum still
// follows answers, once it applied everything committed before. (A batch
// passes one barrier for all its reads: passedBarrier.)
func (r *replica) View(ctx context.Context, fn func(kv.Reader) error) error {
	if !passedBarrier(ctx) {
		if err := r.node.ReadBarrier(ctx); err != nil {
			return r.raftError(err)
		}
	}
	return r.Applied(fn)
}

// barrier passes a read barrier and returns ctx marked as having passed
// it, so that the reads made with it pass none of their own.
func (r *replica) barrier(ctx context.Context) (context.Context, error) {
	if passedBarrier(ctx) {
		return ctx, nil
	}
	if err := r.node.ReadBarrier(ctx); err != nil {
		return ctx, r.raftError(err)
	}
	return context.WithValue(ctx, barrierKey{}, true), nil
}

// barrierKey marks a context whose reads passed a read barrier already.
type barrierKey struct{}

func passedBarrier(ctx context.Context) bool { return ctx.Value(barrierKey{}) != nil }

// Applied runs fn against the applied state as it is, with no barrier:
// for what the leader reads to propose (a proposal that lost a race fails
// alone), and for what every member keeps in memory. The state is the
// store, and over it what volatile entries wrote that is not in it yet.
func (r *replica) Applied(fn func(kv.Reader) error) error {
	return r.store.View(func(rd kv.Reader) error {
		pending := r.pending.Load()
		if pending == nil {
			return fn(rd)
		}
		r.pendingMu.RLock()
		defer r.pendingMu.RUnlock()
		return fn(pending.Over(rd))
	})
}

// Now is the member's clock.
func (r *replica) Now() time.Time { return r.cfg.Clock() }

// IsSuperuser reports whether c bypasses permission checks.
func (r *replica) IsSuperuser(c statemachine.Caller) bool { return r.machine.IsSuperuser(c) }

// ID is this member's id.
func (r *replica) ID() uint64 { return r.cfg.MemberID }

// IsLeader reports whether this member leads.
func (r *replica) IsLeader() bool {
	_, leader := r.node.Leader()
	return leader
}

// Leader returns the leader this member knows of (0: none), and whether
// this member is it.
func (r *replica) Leader() (uint64, bool) { return r.node.Leader() }

// Status is Raft's view of the group.
func (r *replica) Status() raft.Status { return r.node.Status() }

// HeardFrom reports whether member id answered recently.
func (r *replica) HeardFrom(id uint64) bool { return r.node.HeardFrom(id) }

// NotLeader is the answer of a member that cannot serve a request because
// it does not lead; it names the leader when it knows one.
func (r *replica) NotLeader() error {
	lead, _ := r.node.Leader()
	return fserr.NotLeader(r.members.Address(lead))
}

// raftError turns the node's ErrNotLeader into the answer clients act on:
// NOT_LEADER naming the leader.
func (r *replica) raftError(err error) error {
	if errors.Is(err, raftnode.ErrNotLeader) {
		return r.NotLeader()
	}
	return err
}

// Done is closed when the node stops, on close or on a fatal error.
func (r *replica) Done() <-chan struct{} { return r.node.Done() }

// Stopped says why the node stopped.
func (r *replica) Stopped() error {
	if err := r.node.Err(); err != nil {
		return err
	}
	return raftnode.ErrStopped
}

// TransferLeadership asks member to to take the lead.
func (r *replica) TransferLeadership(ctx context.Context, to uint64) error {
	return r.raftError(r.node.TransferLeadership(ctx, to))
}

// ChangeMembers proposes a configuration change and waits until it is
// applied.
func (r *replica) ChangeMembers(ctx context.Context, typ raftpb.ConfChangeType, id uint64, addr string) error {
	pid := r.nextProposal.Add(1)
	p := newProposal(nil)
	r.await(pid, p)
	defer r.unwait(pid)
	cc := &raftpb.ConfChange{Type: typ.Enum(), NodeId: proto.Uint64(id), Context: []byte(addr), Id: proto.Uint64(pid)}
	if err := r.node.ProposeConfChange(ctx, cc); err != nil {
		return r.raftError(err)
	}
	select {
	case <-p.done:
		return r.raftError(p.err)
	case <-ctx.Done():
		return ctx.Err()
	case <-r.node.Done():
		return r.Stopped()
	}
}

// Try applies cmd, stamped as a proposal would be, to an overlay of the
// applied state that is thrown away: whether the command would succeed
// now (cache mode asks before it does a mutation's bucket side).
func (r *replica) Try(ctx context.Context, cmd *pb.Command) (statemachine.Result, error) {
	cmd = proto.CloneOf(cmd)
	cmd.Now, cmd.Settings = r.cfg.Clock().UnixMilli(), r.machine.Settings()
	var res statemachine.Result
	err := r.View(ctx, func(rd kv.Reader) error {
		rs, err := r.machine.Apply(kv.NewOverlay(rd), cmd)
		if err == nil {
			res, err = rs[0], rs[0].Err
		}
		return err
	})
	return res, err
}
