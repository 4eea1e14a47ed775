// Package raftnode drives an etcd raft node: it persists the log in its own
// pebble instance, hands committed entries to the state machine in batches,
// compacts the log behind the state machine's durable point, moves messages
// and snapshots between members through a Sender (Transport over gRPC;
// MemNetwork in one process, for tests that inject partitions and losses),
// and serves linearizable read barriers (ReadIndex). It knows nothing of
// what the entries mean.
//
// A single-member group is the same code path as a larger one.
package raftnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
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
	// offered again (after a restart, or after a snapshot that was ahead of
	// its Raft metadata) and must be skipped.
	// An error is fatal for the node: the state can no longer follow the log.
	Apply(entries []*pb.Entry) error
	// Durable tells that the log is synced through index: the effects of
	// the volatile entries applied so far (Config.Volatile), which the
	// state machine may hold in memory only, may now be made durable. It
	// comes in order with Apply.
	Durable(index uint64) error
	// Sync makes every applied entry durable (Durable came first for the
	// volatile ones); the log behind it may then be dropped.
	Sync() error
	// Checkpoint writes a consistent copy of the state, at an applied index
	// at least the last one Apply was given, to dir (which does not exist
	// yet), for a member that needs a snapshot.
	Checkpoint(dir string) error
	// Restore replaces the state with the checkpoint received in dir.
	Restore(dir string) error
}

// Config configures a node.
type Config struct {
	ID uint64
	// ClusterID names the group; members refuse traffic of other groups.
	ClusterID string
	// Peers are the voters of a new group (this member among them). With
	// Join, the member starts with an empty log and waits for the leader
	// of an existing group, which must have added it, to send it a
	// snapshot. Both are ignored when a log exists.
	Peers []uint64
	Join  bool
	Dir   string // the log's pebble directory
	// Applied is the index of the last entry the state machine applied
	// (durably) before this start.
	Applied uint64
	// Tick is the Raft tick; elections take 10 to 20 ticks, heartbeats 1.
	Tick time.Duration
	// CompactEvery compacts the log each time this many entries were
	// applied; CompactKeep entries stay behind the compaction point for
	// followers that lag a little (more lag takes a snapshot).
	CompactEvery, CompactKeep uint64
	// Transport carries messages to other members (a *Transport, or a
	// MemNetwork's member in tests); nil for a group that never has more
	// than this one member.
	Transport Sender
	// OnLeader, if set, is called from the node's loop (it must not block)
	// when the leader this member knows of changes, with the term it knows.
	OnLeader func(lead, term uint64, isLeader bool)
	// Volatile, if set, tells the entries that may be acknowledged once
	// written to the log, before it is synced (an hflush's): they survive
	// the kill of any process, not a power loss of the machines holding
	// them. A Ready whose entries are all volatile is written without a
	// sync; the log is synced at the next entry that is not, or within
	// two ticks, and the state machine hears of it (Durable).
	Volatile func(data []byte) bool
	Log      *slog.Logger
}

// Node is a running Raft member.
type Node struct {
	cfg       Config
	rn        raft.Node
	log       *logStore
	sm        StateMachine
	stopc     chan struct{} // closed by Stop or Fail
	done      chan struct{} // closed when the run loop has exited
	stopOnce  sync.Once     // closes stopc
	closeOnce sync.Once     // stops raft and closes the log

	// Owned by the run loop.
	confState     *pb.ConfState
	lastCompacted uint64
	confChanged   bool // compact at once: snapshots must carry the new membership
	unsynced      bool // the log holds volatile entries written since its last sync

	// The applier: the run loop queues committed entries, a goroutine of
	// its own applies them (see handle).
	applyq    chan applyJob
	applyDone chan struct{} // closed when the applier has exited
	applied   atomic.Uint64 // the last entry applied

	// Published by the run loop for readers on other goroutines.
	lead     atomic.Uint64
	term     atomic.Uint64
	isLeader atomic.Bool
	voters   atomic.Int32
	last     atomic.Uint64

	reads readIndex
	heard heardFrom

	// writing is closed when the log write under way ends; nil between
	// writes (LogWrite).
	writeMu sync.Mutex
	writing chan struct{}

	errMu sync.Mutex
	err   error // the fatal error that stopped the loop
}

// electionTicks is the ticks without a leader after which a member
// campaigns (raft waits between one and two times that).
const electionTicks = 10

// ErrStopped is returned by proposals to a node that stopped.
var ErrStopped = errors.New("raftnode: stopped")

// ErrNotLeader is returned by Propose and ReadIndex on a member that is not
// the leader (or stopped being it before the request was taken).
var ErrNotLeader = errors.New("raftnode: not the leader")

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
	if err := ls.checkCluster(cfg.ClusterID); err != nil {
		ls.close()
		return nil, err
	}
	if !existed && !cfg.Join {
		if err := ls.bootstrap(cfg.Peers); err != nil {
			ls.close()
			return nil, fmt.Errorf("raftnode: bootstrap: %w", err)
		}
	}
	hs, _, err := ls.mem.InitialState()
	if err != nil {
		ls.close()
		return nil, err
	}
	// Raft replays every committed entry after the compaction point: the
	// state machine skips those it applied already (it may even be ahead of
	// the commit index the log recorded, see handle), but membership
	// changes among them must reach raft again, which keeps the
	// configuration only as of the compaction point.
	snap, err := ls.mem.Snapshot()
	if err != nil {
		ls.close()
		return nil, err
	}
	rc := &raft.Config{
		ID: cfg.ID, ElectionTick: electionTicks, HeartbeatTick: 1, Storage: ls.mem,
		Applied: min(snap.GetMetadata().GetIndex(), hs.GetCommit()), MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		MaxCommittedSizePerReady: maxCommittedPerReady, MaxUncommittedEntriesSize: 256 << 20,
		PreVote: true, CheckQuorum: true, DisableProposalForwarding: true, StepDownOnRemoval: true,
		Logger: raftLogger{cfg.Log},
	}
	n := &Node{cfg: cfg, log: ls, sm: sm, stopc: make(chan struct{}), done: make(chan struct{}),
		applyq: make(chan applyJob, applyQueue), applyDone: make(chan struct{})}
	n.applied.Store(cfg.Applied)
	n.setConfState(snap.GetMetadata().GetConfState())
	n.lastCompacted = snap.GetMetadata().GetIndex()
	n.reads.init(n)
	n.rn = raft.RestartNode(rc)
	go n.runApplier()
	go n.run()
	go n.reads.loop()
	if len(n.confState.GetVoters()) == 1 && n.confState.GetVoters()[0] == cfg.ID {
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
	if err := n.checkLeader(); err != nil {
		return err
	}
	return n.translate(n.rn.Propose(ctx, data))
}

// ProposeConfChange submits a membership change.
func (n *Node) ProposeConfChange(ctx context.Context, cc *pb.ConfChange) error {
	if err := n.checkLeader(); err != nil {
		return err
	}
	return n.translate(n.rn.ProposeConfChange(ctx, cc))
}

// TransferLeadership asks the leader to hand over to member to.
func (n *Node) TransferLeadership(ctx context.Context, to uint64) error {
	if err := n.checkLeader(); err != nil {
		return err
	}
	n.rn.TransferLeadership(ctx, n.cfg.ID, to)
	return nil
}

// Step hands a message from another member to the node.
func (n *Node) Step(ctx context.Context, m *pb.Message) error {
	n.heard.from(m.GetFrom())
	return n.translate(n.rn.Step(ctx, m))
}

// ReportUnreachable tells raft that a message to id was lost.
func (n *Node) ReportUnreachable(id uint64) { n.rn.ReportUnreachable(id) }

// ReportSnapshot tells raft how sending a snapshot to id ended.
func (n *Node) ReportSnapshot(id uint64, ok bool) {
	st := raft.SnapshotFinish
	if !ok {
		st = raft.SnapshotFailure
	}
	n.rn.ReportSnapshot(id, st)
}

func (n *Node) checkLeader() error {
	select {
	case <-n.done:
		return n.stopErr()
	default:
	}
	if !n.isLeader.Load() {
		return ErrNotLeader
	}
	return nil
}

func (n *Node) translate(err error) error {
	switch {
	case errors.Is(err, raft.ErrStopped):
		return n.stopErr()
	case errors.Is(err, raft.ErrProposalDropped):
		return ErrNotLeader
	}
	return err
}

// LogWrite returns a channel closed once the loop's write of new entries
// to the log ends, or nil if it is not writing any. A proposer may gather
// the commands that come meanwhile into one entry: the loop takes no new
// entry before the write ends, so one entry proposed then leaves as soon
// as many would have, and costs one trip through raft and the applier.
func (n *Node) LogWrite() <-chan struct{} {
	n.writeMu.Lock()
	defer n.writeMu.Unlock()
	return n.writing
}

// save writes rd's hard state and entries to the log (LogWrite tells the
// write of entries under way).
func (n *Node) save(rd raft.Ready, sync bool) error {
	if len(rd.Entries) > 0 {
		n.writeMu.Lock()
		n.writing = make(chan struct{})
		n.writeMu.Unlock()
		defer func() {
			n.writeMu.Lock()
			close(n.writing)
			n.writing = nil
			n.writeMu.Unlock()
		}()
	}
	return n.log.save(rd.HardState, rd.Entries, sync)
}

// Status reports the node's Raft status (a round trip through raft's
// goroutine: not for every request).
func (n *Node) Status() raft.Status { return n.rn.Status() }

// Leader returns the leader this member knows of (0 if none) and whether it
// is this member.
func (n *Node) Leader() (uint64, bool) { return n.lead.Load(), n.isLeader.Load() }

// LastIndex returns the index of the last entry in this member's log.
func (n *Node) LastIndex() uint64 { return n.last.Load() }

// Term returns the last term this member persisted.
func (n *Node) Term() uint64 { return n.term.Load() }

// ID returns the member's id.
func (n *Node) ID() uint64 { return n.cfg.ID }

// Done is closed when the node stops, by Stop or on a fatal error.
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns the fatal error that stopped the node, if any.
func (n *Node) Err() error {
	n.errMu.Lock()
	defer n.errMu.Unlock()
	return n.err
}

// Fail stops the node with a fatal error (a transport that learnt this
// member no longer belongs to the group, say).
func (n *Node) Fail(err error) {
	n.errMu.Lock()
	if n.err == nil {
		n.err = err
	}
	n.errMu.Unlock()
	go n.stopLoop()
}

// Stop stops the node and closes its log.
func (n *Node) Stop() {
	n.stopLoop()
	n.closeOnce.Do(func() {
		n.rn.Stop()
		if n.unsynced {
			_ = n.log.sync() // the loop is done: a stopped member's log is all durable
		}
		n.log.close()
	})
}

func (n *Node) stopLoop() {
	n.stopOnce.Do(func() { close(n.stopc) })
	<-n.done
}

func (n *Node) stopErr() error {
	if err := n.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrStopped, err)
	}
	return ErrStopped
}

func (n *Node) run() {
	defer close(n.done)
	defer n.reads.failAll(ErrStopped)
	defer func() {
		close(n.applyq)
		<-n.applyDone
	}()
	ticker := time.NewTicker(n.cfg.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-n.stopc:
			return
		case <-ticker.C:
			n.heard.tick()
			n.rn.Tick()
			if err := n.syncVolatile(); err != nil {
				n.errMu.Lock()
				n.err = err
				n.errMu.Unlock()
				n.cfg.Log.Error("raft node stopped", "err", err)
				return
			}
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

// maxCommittedPerReady bounds the bytes of committed entries one Ready
// hands to the state machine, which applies them as one batch (at least
// one entry, however large). Small batches let the proposers of the first
// ones have their answers, and send their next requests, while the next
// batch is applied; with all that committed at once (tens of entries under
// load), every client waited for the whole batch, and the apply goroutine
// then waited for them. 4 KiB is about 16 small mutations: at 64 threads,
// 5-10% more creates per second than 8 MiB in alternated runs, with 10%
// more of the two cores busy (2 KiB was no better than 8 MiB).
const maxCommittedPerReady = 4 << 10

// applyQueue bounds the batches of committed entries queued for the
// applier; a loop that gets that far ahead waits for it.
const applyQueue = 16

// handle processes one Ready: restore a snapshot, queue what is durable
// already for the applier, persist, send, queue the rest, compact.
//
// NB: the applier works while the loop persists and sends: committed
// entries that an earlier Ready persisted are applied while this Ready's
// entries are fsynced, and the loop takes the next Ready without waiting
// for the apply. Only entries persisted by this very Ready wait for its
// fsync. A leader sends its appends before it persists them (Raft thesis
// §10.2.1), so followers write in parallel with it. A membership change
// is applied by the loop itself once the applier is idle, before the log
// is written: raft's configuration is not to change meanwhile.
func (n *Node) handle(rd raft.Ready) error {
	// The term first: a new leader's is in the same Ready.
	if rd.HardState != nil && rd.HardState.GetTerm() != 0 {
		n.term.Store(rd.HardState.GetTerm())
	}
	if rd.SoftState != nil {
		n.setSoftState(rd.SoftState)
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.drain(); err != nil {
			return err
		}
		if err := n.restore(rd.Snapshot); err != nil {
			return err
		}
	}
	if len(rd.ReadStates) > 0 {
		n.reads.answered(rd.ReadStates)
	}
	durable := 0
	for durable < len(rd.CommittedEntries) && rd.CommittedEntries[durable].GetIndex() <= n.log.last {
		durable++
	}
	apply := n.queue
	if slices.ContainsFunc(rd.CommittedEntries, func(e *pb.Entry) bool { return e.GetType() != pb.EntryType_EntryNormal }) {
		if err := n.drain(); err != nil {
			return err
		}
		apply = n.apply
	}
	leader := n.isLeader.Load()
	if leader {
		n.send(rd.Messages)
	}
	if err := apply(rd.CommittedEntries[:durable]); err != nil {
		return err
	}
	sync := n.mustSync(rd)
	if err := n.save(rd, sync); err != nil {
		return fmt.Errorf("save log: %w", err)
	}
	if err := n.synced(sync, len(rd.Entries) > 0); err != nil {
		return err
	}
	n.last.Store(n.log.last)
	if !leader {
		n.send(rd.Messages)
	}
	if err := apply(rd.CommittedEntries[durable:]); err != nil {
		return err
	}
	n.rn.Advance()
	return n.maybeCompact()
}

// mustSync reports whether rd's writes must be synced before its messages
// go and its entries count: raft's rule (new entries, a new term or vote),
// but for a Ready whose new entries are all volatile (Config.Volatile).
// NB: a sync of the log syncs everything written before it too, so a
// durable entry makes the volatile ones before it durable.
func (n *Node) mustSync(rd raft.Ready) bool {
	if !rd.MustSync {
		return false
	}
	if hs, prev := rd.HardState, n.log.hs; !raft.IsEmptyHardState(hs) && (prev.GetTerm() != hs.GetTerm() || prev.GetVote() != hs.GetVote()) {
		return true
	}
	return n.cfg.Volatile == nil || slices.ContainsFunc(rd.Entries, func(e *pb.Entry) bool {
		return e.GetType() != pb.EntryType_EntryNormal || !n.cfg.Volatile(e.GetData())
	})
}

// synced keeps track of volatile entries written without a sync (wrote:
// the write had entries; sync: it was synced): once a sync covers them,
// the state machine hears, in order with the entries queued for it, that
// they are durable.
func (n *Node) synced(sync, wrote bool) error {
	switch {
	case !sync:
		n.unsynced = n.unsynced || wrote
		return nil
	case n.unsynced:
		n.unsynced = false
		return n.queueJob(applyJob{durable: n.log.last})
	}
	return nil
}

// syncVolatile syncs the log if it holds volatile entries written since
// its last sync (synced tells the state machine).
func (n *Node) syncVolatile() error {
	if !n.unsynced {
		return nil
	}
	if err := n.log.sync(); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	return n.synced(true, false)
}

// applyJob is a batch of committed entries for the applier; or, with
// durable set, the index through which the log is synced; or, with
// drained set, a marker that it closes once everything before is applied.
type applyJob struct {
	entries []*pb.Entry
	durable uint64
	drained chan struct{}
}

// runApplier applies the batches the loop queues, in order, until the loop
// closes the queue. An error stops the node.
func (n *Node) runApplier() {
	defer close(n.applyDone)
	for job := range n.applyq {
		var err error
		switch {
		case job.drained != nil:
			close(job.drained)
		case job.durable != 0:
			err = n.sm.Durable(job.durable)
		default:
			err = n.apply(job.entries)
		}
		if err != nil {
			n.Fail(err)
			return
		}
	}
}

// queue hands committed entries to the applier.
func (n *Node) queue(entries []*pb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	return n.queueJob(applyJob{entries: entries})
}

func (n *Node) queueJob(job applyJob) error {
	select {
	case n.applyq <- job:
		return nil
	case <-n.applyDone:
		return n.stopErr()
	}
}

// drain waits until the applier applied everything queued.
func (n *Node) drain() error {
	drained := make(chan struct{})
	select {
	case n.applyq <- applyJob{drained: drained}:
	case <-n.applyDone:
		return n.stopErr()
	}
	select {
	case <-drained:
		return nil
	case <-n.applyDone:
		return n.stopErr()
	}
}

func (n *Node) send(msgs []*pb.Message) {
	if n.cfg.Transport != nil && len(msgs) > 0 {
		n.cfg.Transport.Send(msgs)
	}
}

func (n *Node) setSoftState(ss *raft.SoftState) {
	was := n.lead.Load()
	wasLeader := n.isLeader.Load()
	isLeader := ss.RaftState == raft.StateLeader
	n.lead.Store(ss.Lead)
	n.isLeader.Store(isLeader)
	if wasLeader && !isLeader {
		n.reads.failAll(ErrNotLeader)
	}
	if (was != ss.Lead || wasLeader != isLeader) && n.cfg.OnLeader != nil {
		n.cfg.OnLeader(ss.Lead, n.term.Load(), isLeader)
	}
}

// restore replaces the state with a received snapshot, whose Data the
// Sender set to the local directory it received the checkpoint into.
func (n *Node) restore(snap *pb.Snapshot) error {
	dir := string(snap.GetData())
	if err := n.sm.Restore(dir); err != nil {
		return fmt.Errorf("restore snapshot %d from %s: %w", snap.GetMetadata().GetIndex(), dir, err)
	}
	meta := proto.Clone(snap).(*pb.Snapshot)
	meta.Data = nil
	if err := n.log.installSnapshot(meta); err != nil {
		return fmt.Errorf("install snapshot: %w", err)
	}
	n.setConfState(meta.GetMetadata().GetConfState())
	n.applied.Store(meta.GetMetadata().GetIndex())
	n.lastCompacted = meta.GetMetadata().GetIndex()
	removeReceived(dir, n.lastCompacted)
	n.cfg.Log.Info("restored a snapshot", "index", n.lastCompacted)
	return nil
}

func (n *Node) setConfState(cs *pb.ConfState) {
	n.confState = proto.Clone(cs).(*pb.ConfState)
	n.voters.Store(int32(len(cs.GetVoters())))
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
		n.setConfState(n.rn.ApplyConfChange(cc))
		n.confChanged = true
	}
	n.applied.Store(entries[len(entries)-1].GetIndex())
	n.reads.appliedTo(entries[len(entries)-1].GetIndex())
	return nil
}

// maybeCompact moves the compaction point every CompactEvery entries, and
// after each membership change: a member that needs a snapshot must be in
// the snapshot's configuration, or raft refuses to restore it.
func (n *Node) maybeCompact() error {
	applied := n.applied.Load() // before the Sync, which makes it durable
	if applied <= n.lastCompacted || applied < n.lastCompacted+n.cfg.CompactEvery && !n.confChanged {
		return nil
	}
	n.confChanged = false
	// What is applied of volatile entries is made durable first: the log
	// synced, the state machine told (a sync since may have made them
	// durable already: it is told again), and the applier idle.
	if err := n.log.sync(); err != nil {
		return fmt.Errorf("sync log: %w", err)
	}
	n.unsynced = false
	if err := n.queueJob(applyJob{durable: n.log.last}); err != nil {
		return err
	}
	if err := n.drain(); err != nil {
		return err
	}
	if err := n.sm.Sync(); err != nil {
		return fmt.Errorf("sync state: %w", err)
	}
	if err := n.log.compact(applied, n.cfg.CompactKeep, n.confState); err != nil {
		return fmt.Errorf("compact log: %w", err)
	}
	n.lastCompacted = applied
	return nil
}

// raftLogger sends the raft library's log to slog.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)              {}
func (r raftLogger) Debugf(string, ...any)       {}
func (r raftLogger) Info(v ...any)               {}
func (r raftLogger) Infof(f string, v ...any)    { r.l.Debug(fmt.Sprintf(f, v...)) }
func (r raftLogger) Warning(v ...any)            { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(f string, v ...any) { r.l.Warn(fmt.Sprintf(f, v...)) }
func (r raftLogger) Error(v ...any)              { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(f string, v ...any)   { r.l.Error(fmt.Sprintf(f, v...)) }
func (r raftLogger) Fatal(v ...any)              { panic(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)              { panic(fmt.Sprint(v...)) }
func (r raftLogger) Panicf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
