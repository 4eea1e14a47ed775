package metaserver

import (
	"context"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// handOverTimeout bounds how long Raft may take to accept an entry: it
// refuses at once without a leader, and only a leadership change under way
// holds it up.
const handOverTimeout = 5 * time.Second

// proposal is a command waiting for the result of applying it.
type proposal struct {
	cmd  *pb.Command
	done chan struct{} // closed once res and err are set
	res  statemachine.Result
	err  error // why the command was not applied
}

func newProposal(cmd *pb.Command) *proposal {
	return &proposal{cmd: cmd, done: make(chan struct{})}
}

func (p *proposal) finish(r statemachine.Result, err error) {
	p.res, p.err = r, err
	close(p.done)
}

// proposals gathers the commands proposed while the Raft loop writes new
// entries to the log, or while an earlier entry is being handed to Raft,
// and proposes them next as one entry (a CommandGroup). Under load, tens of
// commands share an entry, one trip through Raft's goroutine and the log,
// and one apply of the entry; a lone command goes at once, alone.
type proposals struct {
	mu       sync.Mutex
	handing  bool        // some goroutine is handing entries to Raft
	queue    []*proposal // waiting for the next entry
	waiting  map[uint64][]*proposal
	logWrite func() <-chan struct{} // the Raft loop's write under way (raftnode's LogWrite)
}

// setLogWrite sets what tells the Raft loop's log write under way.
func (ps *proposals) setLogWrite(w func() <-chan struct{}) {
	ps.mu.Lock()
	ps.logWrite = w
	ps.mu.Unlock()
}

// writeUnderWay returns a channel closed once the Raft loop's log write
// under way ends, or nil if none is.
func (ps *proposals) writeUnderWay() <-chan struct{} {
	ps.mu.Lock()
	w := ps.logWrite
	ps.mu.Unlock()
	if w == nil {
		return nil
	}
	return w()
}

// join queues q and reports whether the caller is to hand the queue over.
func (ps *proposals) join(q ...*proposal) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.queue = append(ps.queue, q...)
	lead := !ps.handing
	ps.handing = true
	return lead
}

// take returns the queue, or nil when it is empty, which ends the turn.
func (ps *proposals) take() []*proposal {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	q := ps.queue
	ps.queue = nil
	ps.handing = len(q) > 0
	return q
}

// queued reports whether commands wait for the next entry; when none do,
// the turn ends.
func (ps *proposals) queued() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.handing = len(ps.queue) > 0
	return ps.handing
}

// Propose stamps cmd with the time and the namespace settings, puts it in
// the log, perhaps in one entry with others, and waits until it is
// applied, returning what applying it produced. The error is the command's
// answer if it failed, or why it was not applied (no leader, the member
// stopped, ctx done).
func (r *replica) Propose(ctx context.Context, cmd *pb.Command) (statemachine.Result, error) {
	p := newProposal(cmd)
	r.submit(p)
	return r.wait(ctx, p)
}

// releaseWhenSettled calls release once proposal p is settled: applied,
// failed, or never to be (stopped closed: the member stopped); at once for a
// call that proposed nothing (p nil). What a cache-mode call holds must
// outlast a caller that gave up waiting, its context ended: its command may
// still be applied, and a sync between its bucket side and its apply would
// undo the one or the other (internal/cachemode, hold.go).
func releaseWhenSettled(p *proposal, stopped <-chan struct{}, release func()) {
	if p == nil {
		release()
		return
	}
	select {
	case <-p.done:
		release()
		return
	default:
	}
	go func() {
		select {
		case <-p.done:
		case <-stopped:
		}
		release()
	}()
}

// wait waits for the result of proposal p.
func (r *replica) wait(ctx context.Context, p *proposal) (statemachine.Result, error) {
	select {
	case <-p.done:
		if p.err != nil {
			return statemachine.Result{}, r.raftError(p.err)
		}
		return p.res, p.res.Err
	case <-ctx.Done():
		return statemachine.Result{}, ctx.Err()
	case <-r.node.Done():
		return statemachine.Result{}, r.Stopped()
	}
}

// submit queues q for the next entry, and hands it over if no other
// goroutine is handing entries over.
func (r *replica) submit(q ...*proposal) {
	if !r.props.join(q...) {
		return
	}
	if q := r.gather(); q != nil {
		r.proposeEntry(q)
	}
	// Commands that queued meanwhile go in the next entry, which a
	// goroutine of their own hands over, so that this caller has its
	// answer whatever the load.
	if r.props.queued() {
		go r.proposeQueued()
	}
}

// gather waits out the Raft loop's log write under way, if any, while the
// commands proposed meanwhile join the queue, and takes the queue: nil if
// it is empty, which ends the turn. Proposed during the write, each would
// have been an entry of its own, all waiting for the same next write
// (raftnode's LogWrite): 8 writers' hsyncs made 1.1 commands an entry.
func (r *replica) gather() []*proposal {
	if w := r.props.writeUnderWay(); w != nil {
		select {
		case <-w:
		case <-r.node.Done():
		}
	}
	return r.props.take()
}

// submitAlone puts p in an entry of its own: a command that ingests tables
// (statemachine.Op.Ingests) shares none, as a command after it in one
// entry would be applied before the tables are in.
func (r *replica) submitAlone(p *proposal) { r.proposeEntry([]*proposal{p}) }

// proposeQueued proposes what queued, an entry at a time, until nothing
// did.
func (r *replica) proposeQueued() {
	for q := r.gather(); q != nil; q = r.gather() {
		r.proposeEntry(q)
	}
}

// proposeEntry puts the commands of q in the log as one entry. The results
// reach them when it is applied (deliver), or they fail now.
func (r *replica) proposeEntry(q []*proposal) {
	cmd := q[0].cmd
	if len(q) > 1 {
		g := &pb.CommandGroup{Commands: make([]*pb.Command, len(q))}
		for i, p := range q {
			g.Commands[i] = p.cmd
		}
		cmd = &pb.Command{Op: &pb.Command_Group{Group: g}}
	}
	cmd.Id = r.nextProposal.Add(1)
	cmd.Now = r.cfg.Clock().UnixMilli()
	cmd.Settings = r.machine.Settings()
	cmd.Volatile = volatileCommands(q)
	data, err := proto.Marshal(cmd)
	if err == nil {
		r.await(cmd.Id, q...)
		ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
		err = r.node.Propose(ctx, data)
		cancel()
		if err != nil {
			q = r.unwait(cmd.Id)
		} else {
			r.obs.Proposed(len(q))
		}
	}
	if err != nil {
		for _, p := range q {
			p.finish(statemachine.Result{}, err)
		}
	}
}

// await registers proposals for the result of entry id: one command, or
// the commands of a group in order.
func (r *replica) await(id uint64, q ...*proposal) {
	r.props.mu.Lock()
	r.props.waiting[id] = q
	r.props.mu.Unlock()
}

// unwait unregisters entry id, returning its proposals if they were still
// waiting.
func (r *replica) unwait(id uint64) []*proposal {
	r.props.mu.Lock()
	defer r.props.mu.Unlock()
	q := r.props.waiting[id]
	delete(r.props.waiting, id)
	return q
}

// deliver hands the results of applying entry id to its proposals, one
// per command (none for a membership change).
func (r *replica) deliver(id uint64, rs []statemachine.Result) {
	for i, p := range r.unwait(id) {
		var res statemachine.Result
		if i < len(rs) {
			res = rs[i]
		}
		p.finish(res, nil)
	}
}

// failWaiters fails every proposal waiting for its entry (leadership lost,
// or the member stopped); clients retry.
func (r *replica) failWaiters(err error) {
	r.props.mu.Lock()
	waiting := r.props.waiting
	r.props.waiting = map[uint64][]*proposal{}
	r.props.mu.Unlock()
	for _, q := range waiting {
		for _, p := range q {
			p.finish(statemachine.Result{}, err)
		}
	}
}
