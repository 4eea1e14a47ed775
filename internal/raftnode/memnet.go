package raftnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/privdir"
)

// MemNetwork connects the members of a group in one process, for tests: each
// member's MemSender steps its messages straight into the other members'
// nodes, with no gRPC and no sockets, and moves snapshots as directories.
// Its faults are a network's: links cut by Partition, messages lost to a
// filter (SetDrop). The nodes see them only as messages that do not arrive,
// as they would on a real network.
type MemNetwork struct {
	dir string // a directory of each member's, where snapshots are staged

	mu struct {
		sync.Mutex
		members map[uint64]*MemSender
		side    map[uint64]int // members on different sides cannot talk
		drop    func(m *pb.Message) bool
	}
}

// NewMemNetwork returns a network with no members; snapshots are staged in
// dir (one file system, so that delivering one is a rename).
func NewMemNetwork(dir string) *MemNetwork {
	nw := &MemNetwork{dir: dir}
	nw.mu.members = map[uint64]*MemSender{}
	nw.mu.side = map[uint64]int{}
	return nw
}

// Join connects member id, whose state machine writes its checkpoints with
// checkpoint, and returns its Sender; Attach it to the member's node once
// started. A member that joins again (restarted) replaces its earlier
// Sender, which is closed, as a process that restarts takes its address
// over.
func (nw *MemNetwork) Join(id uint64, checkpoint func(dir string) error) (*MemSender, error) {
	stage := filepath.Join(nw.dir, strconv.FormatUint(id, 10))
	// Anything staged by an earlier run is stale, as for a Transport.
	if err := os.RemoveAll(stage); err != nil {
		return nil, err
	}
	if err := privdir.MkdirAll(stage); err != nil {
		return nil, err
	}
	s := &MemSender{net: nw, id: id, checkpoint: checkpoint, stage: stage}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.links = map[uint64]chan *pb.Message{}
	nw.mu.Lock()
	old := nw.mu.members[id]
	nw.mu.members[id] = s
	nw.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return s, nil
}

// Partition splits the network: members on different sides cannot talk, and
// a message between them is reported unreachable, as a connection that
// fails. Each group is a side; the members no group names are one more.
// It replaces any earlier partition.
func (nw *MemNetwork) Partition(groups ...[]uint64) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	clear(nw.mu.side)
	for i, g := range groups {
		for _, id := range g {
			nw.mu.side[id] = i + 1
		}
	}
}

// Heal ends any partition.
func (nw *MemNetwork) Heal() { nw.Partition() }

// SetDrop installs a filter: the messages, snapshots among them, for which
// drop returns true are lost without a word, as on a lossy link. It is
// called on the delivering goroutines. nil delivers everything again.
func (nw *MemNetwork) SetDrop(drop func(m *pb.Message) bool) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.mu.drop = drop
}

// route returns the sender of member to if m can reach it; lost says the
// filter dropped m (nobody knows), as against a link that is cut or a
// member that is not there (the sender learns of it).
func (nw *MemNetwork) route(m *pb.Message) (dst *MemSender, lost bool) {
	nw.mu.Lock()
	drop := nw.mu.drop
	if nw.mu.side[m.GetFrom()] != nw.mu.side[m.GetTo()] {
		nw.mu.Unlock()
		return nil, false
	}
	dst = nw.mu.members[m.GetTo()]
	nw.mu.Unlock()
	if drop != nil && drop(m) {
		return nil, true
	}
	return dst, false
}

// MemSender is one member's Sender on a MemNetwork.
type MemSender struct {
	net        *MemNetwork
	id         uint64
	checkpoint func(dir string) error
	stage      string
	node       atomic.Pointer[Node]
	seq        atomic.Uint64 // names staged snapshots

	// Close cancels ctx, which ends the goroutines that deliver, and
	// waits for them on wg: a test's directories can go once it returns.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		links  map[uint64]chan *pb.Message // the queues to each member, in order
		closed bool
	}
}

// Attach connects the sender to the node it serves, which receives what the
// other members send it from then on.
func (s *MemSender) Attach(n *Node) { s.node.Store(n) }

// Close stops the sender: what it had queued is lost, and a snapshot on its
// way fails.
func (s *MemSender) Close() {
	s.mu.Lock()
	s.mu.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// goLocked runs f on a goroutine that Close waits for, unless the sender
// is closed already.
func (s *MemSender) goLocked(f func()) bool {
	if s.mu.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// Send implements Sender.
func (s *MemSender) Send(msgs []*pb.Message) {
	for _, m := range msgs {
		if m.GetType() == pb.MessageType_MsgSnap {
			s.mu.Lock()
			sending := s.goLocked(func() { s.sendSnapshot(m) })
			s.mu.Unlock()
			if !sending {
				s.reportSnapshot(m.GetTo(), false)
			}
			continue
		}
		q := s.link(m.GetTo())
		if q == nil {
			s.reportUnreachable(m.GetTo())
			continue
		}
		select {
		case q <- m:
		default: // as Transport: the member is slow, raft will resend
			s.reportUnreachable(m.GetTo())
		}
	}
}

// link returns the queue to member to, nil once the sender is closed.
func (s *MemSender) link(to uint64) chan<- *pb.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	q := s.mu.links[to]
	if q == nil {
		q = make(chan *pb.Message, 4096)
		if !s.goLocked(func() { s.run(to, q) }) {
			return nil
		}
		s.mu.links[to] = q
	}
	return q
}

// run delivers the messages queued for member to. The route is taken for
// each message as it is delivered: nothing crosses a link after Partition
// cut it.
func (s *MemSender) run(to uint64, q <-chan *pb.Message) {
	for {
		select {
		case <-s.ctx.Done():
			return
		case m := <-q:
			if err := s.deliver(s.ctx, m); err != nil {
				s.reportUnreachable(to)
			}
		}
	}
}

// deliver steps a copy of m (the receiver's raft must not share the
// sender's entries) into its member's node.
func (s *MemSender) deliver(ctx context.Context, m *pb.Message) error {
	dst, lost := s.net.route(m)
	if lost {
		return nil
	}
	n := dst.attached()
	if n == nil {
		return fmt.Errorf("memnet: member %d is not there", m.GetTo())
	}
	return n.Step(ctx, proto.Clone(m).(*pb.Message))
}

// attached returns the node of a sender, nil for a member that is not on
// the network.
func (s *MemSender) attached() *Node {
	if s == nil {
		return nil
	}
	return s.node.Load()
}

func (s *MemSender) reportUnreachable(to uint64) {
	if n := s.node.Load(); n != nil {
		n.ReportUnreachable(to)
	}
}

// sendSnapshot writes a checkpoint in the sender's stage, moves it into the
// receiver's, where it is whole at once, steps m into the receiver with its
// path, and reports the outcome to raft.
func (s *MemSender) sendSnapshot(m *pb.Message) {
	s.reportSnapshot(m.GetTo(), s.transferSnapshot(m) == nil)
}

func (s *MemSender) reportSnapshot(to uint64, ok bool) {
	if n := s.node.Load(); n != nil {
		n.ReportSnapshot(to, ok)
	}
}

func (s *MemSender) transferSnapshot(m *pb.Message) error {
	// NB: a snapshot lost to the filter is a failure, not silence: raft
	// sends a member nothing else until it hears how its snapshot went.
	dst, _ := s.net.route(m)
	n := dst.attached()
	if n == nil {
		return fmt.Errorf("memnet: no route to member %d", m.GetTo())
	}
	out := filepath.Join(s.stage, fmt.Sprintf("out-%d", s.seq.Add(1)))
	defer os.RemoveAll(out)
	if err := s.checkpoint(out); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	in := filepath.Join(dst.stage, fmt.Sprintf("%s%d-%d", receivedName(m.GetSnapshot().GetMetadata().GetIndex()), s.id, s.seq.Add(1)))
	if err := os.Rename(out, in); err != nil {
		return err
	}
	mc := proto.Clone(m).(*pb.Message)
	mc.Snapshot.Data = []byte(in)
	if err := n.Step(s.ctx, mc); err != nil {
		os.RemoveAll(in)
		return err
	}
	return nil
}
