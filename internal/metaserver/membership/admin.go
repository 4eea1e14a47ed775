package membership

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/raft/v3"
	raftpb "go.etcd.io/raft/v3/raftpb"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Node is what the changes need of this member's Raft node. Errors are
// fserr conditions: a node that does not lead answers with NotLeader's.
type Node interface {
	// ID is this member's id.
	ID() uint64
	// Leader returns the leader this member knows of (0: none), and
	// whether this member is it.
	Leader() (lead uint64, isLeader bool)
	// Status is Raft's view: term, indexes, the leader's progress of each
	// member.
	Status() raft.Status
	// HeardFrom reports whether member id answered recently.
	HeardFrom(id uint64) bool
	// ChangeMembers proposes a configuration change and waits until it
	// is applied.
	ChangeMembers(ctx context.Context, typ raftpb.ConfChangeType, id uint64, addr string) error
	// TransferLeadership asks member to to take the lead.
	TransferLeadership(ctx context.Context, to uint64) error
	// NotLeader is the answer of a member that does not lead, naming the
	// leader it knows of.
	NotLeader() error
	// Done is closed when the node stops; Stopped says why.
	Done() <-chan struct{}
	Stopped() error
}

// Admin carries out the membership changes an administrator asks for.
type Admin struct {
	node    Node
	members *Members
}

// NewAdmin returns the changes of members through node.
func NewAdmin(node Node, members *Members) *Admin { return &Admin{node: node, members: members} }

// Add adds member m: it joins as a learner, catches up (from a snapshot,
// typically), and is then made a voter, so that the group never counts on
// an empty member for its quorum. A retry of a finished add answers as
// the add did.
func (a *Admin) Add(ctx context.Context, m *pb.Member) (*pb.MembershipResponse, error) {
	what := fmt.Sprintf("add member %d", m.GetId())
	if m.GetId() == 0 || m.GetAddress() == "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "%s: a member needs an id above 0 and an address", what)
	}
	cur, exists := a.members.All()[m.GetId()]
	switch {
	case exists && !cur.Learner:
		if cur.Address != m.GetAddress() {
			return nil, fserr.Errorf(fserr.ErrExists, "%s: member %d already serves at %s", what, m.GetId(), cur.Address)
		}
		return a.members.Response(), nil
	case !exists:
		if err := a.node.ChangeMembers(ctx, raftpb.ConfChangeType_ConfChangeAddLearnerNode, m.GetId(), m.GetAddress()); err != nil {
			return nil, err
		}
	}
	if m.GetLearner() {
		return a.members.Response(), nil
	}
	if err := a.waitCaughtUp(ctx, m.GetId()); err != nil {
		return nil, err
	}
	if err := a.node.ChangeMembers(ctx, raftpb.ConfChangeType_ConfChangeAddNode, m.GetId(), m.GetAddress()); err != nil {
		return nil, err
	}
	return a.members.Response(), nil
}

// Remove removes member id. The leader removing itself first hands the
// lead over and answers NOT_LEADER, so that the client's retry reaches the
// new leader, which removes it. Unless force says otherwise, a removal
// that would leave the group without a quorum it hears from is refused.
func (a *Admin) Remove(ctx context.Context, id uint64, force bool) (*pb.MembershipResponse, error) {
	what := fmt.Sprintf("remove member %d", id)
	if _, ok := a.members.All()[id]; !ok {
		return a.members.Response(), nil // removed already (or a retry)
	}
	if _, leader := a.node.Leader(); !leader {
		return nil, a.node.NotLeader() // only the leader knows who answers
	}
	if !force {
		if err := a.quorumWithout(id, what); err != nil {
			return nil, err
		}
	}
	if id == a.node.ID() {
		if err := a.handOver(ctx); err != nil {
			return nil, err
		}
		return nil, a.node.NotLeader()
	}
	if err := a.node.ChangeMembers(ctx, raftpb.ConfChangeType_ConfChangeRemoveNode, id, ""); err != nil {
		return nil, err
	}
	return a.members.Response(), nil
}

// Transfer hands the lead to voter id.
func (a *Admin) Transfer(ctx context.Context, id uint64) (*pb.MembershipResponse, error) {
	what := fmt.Sprintf("transfer leadership to member %d", id)
	if m, ok := a.members.All()[id]; !ok || m.Learner {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "%s: no such voting member", what)
	}
	if lead, _ := a.node.Leader(); lead == id {
		return a.members.Response(), nil
	}
	if err := a.transferTo(ctx, id); err != nil {
		return nil, err
	}
	return a.members.Response(), nil
}

// quorumWithout refuses to remove member id when the voters left that this
// leader hears from would not be a majority of them: the group would stop
// serving until enough of the others came back.
func (a *Admin) quorumWithout(id uint64, what string) error {
	var left, silent []uint64
	for mid, m := range a.members.All() {
		if m.Learner || mid == id {
			continue
		}
		left = append(left, mid)
		if mid != a.node.ID() && !a.node.HeardFrom(mid) {
			silent = append(silent, mid)
		}
	}
	need := len(left)/2 + 1
	if len(left)-len(silent) >= need {
		return nil
	}
	slices.Sort(left)
	slices.Sort(silent)
	verb, them := "does", "it"
	if len(silent) > 1 {
		verb, them = "do", "them"
	}
	return fserr.Errorf(fserr.ErrQuorum, "%s: the group would lose its quorum: %s would be left, %d of them must answer, "+
		"and %s %s not (start %s again first, or remove member %d with --force)",
		what, memberList("voter", left), need, memberList("member", silent), verb, them, id)
}

// memberList names members as kind: "member 2", "voters 1 and 3".
func memberList(kind string, ids []uint64) string {
	switch len(ids) {
	case 0:
		return "no " + kind
	case 1:
		return fmt.Sprintf("%s %d", kind, ids[0])
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprint(id)
	}
	return fmt.Sprintf("%ss %s and %s", kind, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// handOver transfers the lead to the voter whose log is the most up to
// date.
func (a *Admin) handOver(ctx context.Context) error {
	st := a.node.Status()
	var best, match uint64
	for id, m := range a.members.All() {
		if pr, ok := st.Progress[id]; ok && id != a.node.ID() && !m.Learner && pr.Match >= match {
			best, match = id, pr.Match
		}
	}
	if best == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "remove member %d: it is the only voter", a.node.ID())
	}
	return a.transferTo(ctx, best)
}

func (a *Admin) transferTo(ctx context.Context, id uint64) error {
	if err := a.node.TransferLeadership(ctx, id); err != nil {
		return err
	}
	return a.poll(ctx, 10*time.Second, func() bool {
		lead, _ := a.node.Leader()
		return lead == id
	}, fmt.Sprintf("member %d did not take over", id))
}

// waitCaughtUp waits until member id's log matches the leader's up to the
// commit index of the moment.
func (a *Admin) waitCaughtUp(ctx context.Context, id uint64) error {
	target := a.node.Status().GetCommit()
	return a.poll(ctx, 10*time.Minute, func() bool {
		pr, ok := a.node.Status().Progress[id]
		return ok && pr.Match >= target
	}, fmt.Sprintf("member %d did not catch up (is it running with --join?)", id))
}

func (a *Admin) poll(ctx context.Context, limit time.Duration, done func() bool, failure string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return fserr.Errorf(fserr.ErrUnavailable, "%s: %v", failure, ctx.Err())
		case <-a.node.Done():
			return a.node.Stopped()
		case <-t.C:
		}
	}
	return nil
}

// Status is this member's view of the group; any member answers, leader
// or not. applied and last are its applied and last log indexes.
func (a *Admin) Status(applied, last uint64) *pb.StatusResponse {
	st := a.node.Status()
	resp := &pb.StatusResponse{MemberId: st.ID, Role: st.RaftState.String(), Term: st.GetTerm(),
		AppliedIndex: applied, CommittedIndex: st.GetCommit(), LeaderId: st.Lead, LastIndex: last,
		LeaderAddress: a.members.Address(st.Lead), Members: a.members.Response().Members}
	for _, m := range resp.Members {
		if pr, ok := st.Progress[m.Id]; ok {
			m.MatchIndex = pr.Match
			m.Answering = m.Id == a.node.ID() || a.node.HeardFrom(m.Id)
			if m.Id != a.node.ID() {
				m.Progress = strings.TrimPrefix(pr.State.String(), "State")
			}
		}
	}
	return resp
}
