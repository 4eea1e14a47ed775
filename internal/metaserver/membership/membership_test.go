package membership

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/raft/v3"
	raftpb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// fakeNode is a group's leader as the changes see it: its membership in a
// kv.Mem that its changes write, as applied configuration changes do.
type fakeNode struct {
	mu      sync.Mutex
	state   *kv.Mem
	members *Members
	id      uint64
	lead    uint64
	heard   map[uint64]bool
	match   map[uint64]uint64
	commit  uint64
	done    chan struct{}
}

func newFakeNode(t *testing.T, voters ...uint64) *fakeNode {
	t.Helper()
	n := &fakeNode{state: kv.NewMem(), members: &Members{}, id: 1, lead: 1, heard: map[uint64]bool{},
		match: map[uint64]uint64{}, commit: 10, done: make(chan struct{})}
	initial := map[uint64]string{}
	for _, id := range voters {
		initial[id] = "host" + string(rune('0'+id)) + ":7700"
		n.heard[id], n.match[id] = true, 10
	}
	if err := statemachine.Bootstrap(n.state, initial); err != nil {
		t.Fatal(err)
	}
	if err := n.members.Load(n.state); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *fakeNode) ID() uint64 { return n.id }

func (n *fakeNode) Leader() (uint64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lead, n.lead == n.id
}

func (n *fakeNode) Status() raft.Status {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := raft.Status{Progress: map[uint64]tracker.Progress{}}
	st.ID, st.Lead = n.id, n.lead
	st.HardState = &raftpb.HardState{Commit: proto.Uint64(n.commit)}
	for id, m := range n.match {
		st.Progress[id] = tracker.Progress{Match: m}
	}
	return st
}

func (n *fakeNode) HeardFrom(id uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.heard[id]
}

func (n *fakeNode) ChangeMembers(_ context.Context, typ raftpb.ConfChangeType, id uint64, addr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch typ {
	case raftpb.ConfChangeType_ConfChangeRemoveNode:
		n.state.Delete(kvschema.MemberKey(id))
		delete(n.match, id)
	default:
		learner := typ == raftpb.ConfChangeType_ConfChangeAddLearnerNode
		n.state.Set(kvschema.MemberKey(id), kvschema.EncodeMember(kvschema.Member{ID: id, Address: addr, Learner: learner}))
		n.match[id] = n.commit // it caught up at once
	}
	return n.members.Load(n.state)
}

func (n *fakeNode) TransferLeadership(_ context.Context, to uint64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lead = to
	return nil
}

func (n *fakeNode) NotLeader() error      { return fserr.NotLeader(n.members.Address(n.lead)) }
func (n *fakeNode) Done() <-chan struct{} { return n.done }
func (n *fakeNode) Stopped() error        { return errors.New("stopped") }

// An added member joins as a learner and becomes a voter once caught up; a
// retry of the add answers as the add did, and another address for its id
// is refused.
func TestAddMakesAVoter(t *testing.T) {
	n := newFakeNode(t, 1)
	a := NewAdmin(n, n.members)
	resp, err := a.Add(context.Background(), &pb.Member{Id: 2, Address: "host2:7700"})
	if err != nil || len(resp.Members) != 2 || resp.Members[1].Learner {
		t.Fatalf("add: %v, %v", resp, err)
	}
	if _, err := a.Add(context.Background(), &pb.Member{Id: 2, Address: "host2:7700"}); err != nil {
		t.Fatalf("a retried add: %v", err)
	}
	if _, err := a.Add(context.Background(), &pb.Member{Id: 2, Address: "elsewhere:7700"}); !errors.Is(err, fserr.ErrExists) {
		t.Fatalf("an add of another address: %v", err)
	}
}

// A removal that would leave the voters this leader hears from without a
// majority is refused, naming who is silent, unless forced.
func TestRemoveKeepsTheQuorum(t *testing.T) {
	n := newFakeNode(t, 1, 2, 3)
	n.heard[3] = false
	a := NewAdmin(n, n.members)
	_, err := a.Remove(context.Background(), 2, false)
	if !errors.Is(err, fserr.ErrQuorum) || !strings.Contains(err.Error(), "member 3") {
		t.Fatalf("remove 2 while 3 is silent: %v", err)
	}
	resp, err := a.Remove(context.Background(), 2, true)
	if err != nil || len(resp.Members) != 2 {
		t.Fatalf("a forced remove: %v, %v", resp, err)
	}
}

// The leader removing itself hands the lead to the voter furthest along
// and answers NOT_LEADER, for the client to ask the new leader.
func TestRemovingTheLeaderHandsItOver(t *testing.T) {
	n := newFakeNode(t, 1, 2, 3)
	n.match[3] = 12
	n.commit = 12
	a := NewAdmin(n, n.members)
	_, err := a.Remove(context.Background(), 1, false)
	if !errors.Is(err, fserr.ErrNotLeader) {
		t.Fatalf("the leader removing itself: %v", err)
	}
	if lead, _ := n.Leader(); lead != 3 {
		t.Fatalf("the lead went to %d, not 3, the furthest along", lead)
	}
}

// The status names each member's progress as the leader sees it.
func TestStatusNamesEveryMember(t *testing.T) {
	n := newFakeNode(t, 1, 2)
	n.heard[2] = false
	st := NewAdmin(n, n.members).Status(9, 10)
	if len(st.Members) != 2 || st.LeaderAddress != "host1:7700" || st.AppliedIndex != 9 {
		t.Fatalf("status: %v", st)
	}
	if !st.Members[0].Answering || st.Members[1].Answering {
		t.Fatalf("answering: %v", st.Members)
	}
}
