// Package raftnode drives an etcd raft node: it persists the log in its own
// pebble instance, hands committed entries to the state machine in batches,
// and compacts the log behind the state machine's durable point. It knows
// nothing of what the entries mean.
//
// A single-member group is the same code path as a larger one; the transport
// between members plugs in through Config.Send.
package raftnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// StateMachine is what the log is applied to.
type StateMachine interface {
	// Apply applies committed entries, in log order, atomically together
	// with the index of the last one. Entries that are not of type
	// EntryNormal carry no command but advance the index all the same.
	// Entries at or below the index the state has applied already can be
	// offered again after a restart and must be skipped.
	// An error is fatal for the node: the state can no longer follow the log.
	Apply(entries []*pb.Entry) error
	// Sync makes every applied entry durable; the log behind it may then
	// be dropped.
	Sync() error
}

// Config configures a node.
type Config struct {
	ID    uint64
	Peers []uint64 // members of a new group; ignored when a log exists
	Dir   string   // the log's pebble directory
	// Applied is the index of the last entry the state machine applied
	// (durably) before this start.
	Applied uint64
	// Tick is the Raft tick; elections take 10 ticks, heartbeats 1.
	Tick time.Duration
	// CompactEvery drops the log each time this many entries were applied.
	CompactEvery uint64
	// Send delivers messages to other members; nil for a single member.
	Send func([]*pb.Message)
	Log  *slog.Logger
}

// Node is a running Raft member.
type Node struct {
	cfg    Config
	rn     raft.Node
	log    *logStore
	sm     StateMachine
	stopc  chan struct{} // closed by Stop
	done   chan struct{} // closed when the run loop has exited
	stopMu sync.Once

	// Owned by the run loop.
	confState     pb.ConfState
	applied       uint64
	lastCompacted uint64

	errMu sync.Mutex
	err   error // the fatal error that stopped the loop
}

// ErrStopped is returned by proposals to a node that stopped.
var ErrStopped = errors.New("raftnode: stopped")

// Start opens the log in cfg.Dir and starts the node.
func Start(cfg Config, sm StateMachine) (*Node, error) {
	if cfg.Tick == 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	if cfg.CompactEvery == 0 {
		cfg.CompactEvery = 10000
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ls, existed, err := openLogStore(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("raftnode: open log: %w", err)
	}
	hs, _, err := ls.mem.InitialState()
	if err != nil {
		ls.close()
		return nil, err
	}
	// The state may have applied entries whose commit the log had not yet
	// recorded when the process stopped (see handle); raft must not be told
	// of an applied index beyond the commit index it knows, and the state
	// machine skips what it has applied already.
	rc := &raft.Config{
		ID: cfg.ID, ElectionTick: 10, HeartbeatTick: 1, Storage: ls.mem,
		Applied: min(cfg.Applied, hs.GetCommit()), MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		MaxCommittedSizePerReady: 8 << 20, MaxUncommittedEntriesSize: 256 << 20,
		PreVote: true, CheckQuorum: true, Logger: raftLogger{cfg.Log},
	}
	if !existed {
		if err := ls.bootstrap(cfg.Peers); err != nil {
			ls.close()
			return nil, fmt.Errorf("raftnode: bootstrap: %w", err)
		}
	}
	n := &Node{cfg: cfg, log: ls, sm: sm, stopc: make(chan struct{}), done: make(chan struct{}), applied: cfg.Applied}
	snap, err := ls.mem.Snapshot()
	if err != nil {
		ls.close()
		return nil, err
	}
	n.confState = *snap.GetMetadata().GetConfState()
	n.lastCompacted = snap.GetMetadata().GetIndex()
	n.rn = raft.RestartNode(rc)
	go n.run()
	if len(cfg.Peers) <= 1 {
		// A lone member need not wait out an election timeout.
		if err := n.rn.Campaign(context.Background()); err != nil {
			n.Stop()
			return nil, err
		}
	}
	return n, nil
}

// Propose submits data to the log. It returns once the leader took the
// proposal, not when it commits; the state machine's Apply reports that.
func (n *Node) Propose(ctx context.Context, data []byte) error {
	select {
	case <-n.done:
		return n.stopErr()
	default:
	}
	err := n.rn.Propose(ctx, data)
	if errors.Is(err, raft.ErrStopped) {
		return n.stopErr()
	}
	return err
}

// Status reports the node's Raft status.
func (n *Node) Status() raft.Status { return n.rn.Status() }

// Done is closed when the node stops, by Stop or on a fatal error.
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns the fatal error that stopped the node, if any.
func (n *Node) Err() error {
	n.errMu.Lock()
	defer n.errMu.Unlock()
	return n.err
}

// Stop stops the node and closes its log.
func (n *Node) Stop() {
	n.stopMu.Do(func() {
		close(n.stopc)
		<-n.done
		n.rn.Stop()
		n.log.close()
	})
}

func (n *Node) stopErr() error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

func (n *Node) run() {
	defer close(n.done)
	ticker := time.NewTicker(n.cfg.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
			n.rn.Tick()
		case rd := <-n.rn.Ready():
			if err := n.handle(rd); err != nil {
				n.errMu.Lock()
				n.err = err
				n.errMu.Unlock()
				n.cfg.Log.Error("raft node stopped", "err", err)
				return
			}
		}
	}
}

// handle processes one Ready: apply what is durable already, persist,
// send, apply the rest, compact.
//
// NB: committed entries that an earlier Ready persisted are applied before
// this Ready's entries are fsynced, so their proposers are answered one
// fsync sooner; only entries persisted by this very Ready wait for it.
func (n *Node) handle(rd raft.Ready) error {
	durable := 0
	for durable < len(rd.CommittedEntries) && rd.CommittedEntries[durable].GetIndex() <= n.log.last {
		durable++
	}
	if err := n.apply(rd.CommittedEntries[:durable]); err != nil {
		return err
	}
	if err := n.log.save(rd.HardState, rd.Entries, rd.MustSync); err != nil {
		return fmt.Errorf("save log: %w", err)
	}
	if n.cfg.Send != nil && len(rd.Messages) > 0 {
		n.cfg.Send(rd.Messages)
	}
	if err := n.apply(rd.CommittedEntries[durable:]); err != nil {
		return err
	}
	n.rn.Advance()
	return n.maybeCompact()
}

func (n *Node) apply(entries []*pb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := n.sm.Apply(entries); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	for _, e := range entries {
		if e.GetType() != pb.EntryType_EntryConfChange {
			continue
		}
		cc := &pb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), cc); err != nil {
			return fmt.Errorf("conf change at %d: %w", e.GetIndex(), err)
		}
		n.confState = *n.rn.ApplyConfChange(cc)
	}
	n.applied = entries[len(entries)-1].GetIndex()
	return nil
}

func (n *Node) maybeCompact() error {
	if n.applied < n.lastCompacted+n.cfg.CompactEvery {
		return nil
	}
	if err := n.sm.Sync(); err != nil {
		return fmt.Errorf("sync state: %w", err)
	}
	if err := n.log.compact(n.applied, &n.confState); err != nil {
		return fmt.Errorf("compact log: %w", err)
	}
	n.lastCompacted = n.applied
	return nil
}

// raftLogger sends the raft library's log to slog.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)              {}
func (r raftLogger) Debugf(string, ...any)       {}
func (r raftLogger) Info(v ...any)               {}
func (r raftLogger) Infof(string, ...any)        {}
func (r raftLogger) Warning(v ...any)            { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(f string, v ...any) { r.l.Warn(fmt.Sprintf(f, v...)) }
func (r raftLogger) Error(v ...any)              { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(f string, v ...any)   { r.l.Error(fmt.Sprintf(f, v...)) }
func (r raftLogger) Fatal(v ...any)              { panic(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)              { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
