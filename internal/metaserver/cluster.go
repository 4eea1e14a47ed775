package metaserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The membership of the Raft group lives in the state (kvschema member
// records), changed only by applied configuration changes, so that every
// member and every snapshot agree on it. A copy in memory serves the
// transport and the leader hints of NOT_LEADER answers.

func (s *Server) loadMembers() error {
	var members map[uint64]kvschema.Member
	err := s.store.View(func(r kv.Reader) (err error) {
		members, err = statemachine.Members(r)
		return err
	})
	addrs := make(map[uint64]string, len(members))
	for id, m := range members {
		addrs[id] = m.Address
	}
	s.members.Store(&members)
	s.addrs.Store(&addrs)
	return err
}

// bootstrapMembers records the initial members in a new state.
func (s *Server) bootstrapMembers() error {
	ov := kv.NewOverlay(s.store.Writer())
	if err := statemachine.Bootstrap(ov, s.cfg.InitialMembers); err != nil {
		return err
	}
	if err := s.store.Commit(ov, true); err != nil {
		return err
	}
	return s.loadMembers()
}

// memberAddresses serves the transport, once per message: the map is
// built by loadMembers and shared, never modified.
func (s *Server) memberAddresses() map[uint64]string { return *s.addrs.Load() }

// leaderChanged runs on the Raft loop when the known leader changes.
func (s *Server) leaderChanged(lead uint64, isLeader bool) {
	s.store.SetWriteThrough(isLeader) // a follower serves no reads
	if !isLeader {
		// Proposals in flight may or may not commit under the next leader;
		// their clients retry with the same request ids and learn which.
		s.failWaiters(raftnode.ErrNotLeader)
		return
	}
	go s.leases.restart()
	select { // the leader's token work (leaderAuth), once the server runs
	case s.authCh <- struct{}{}:
	default:
	}
	s.kickPurge()
	s.kickGC()
}

// notLeader is the answer of a member that cannot serve a request because
// it does not lead; it names the leader when it knows one.
func (s *Server) notLeader() error {
	lead, _ := s.node.Leader()
	return fserr.NotLeader((*s.members.Load())[lead].Address)
}

// Status implements MetaService. Any member answers, leader or not.
func (s *Server) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	st := s.node.Status()
	resp := &pb.StatusResponse{MemberId: st.ID, Role: st.RaftState.String(), Term: st.GetTerm(),
		AppliedIndex: s.applied.Load(), CommittedIndex: st.GetCommit(), Version: Version,
		ClusterId: s.cfg.ClusterID, LeaderId: st.Lead, LastIndex: s.node.LastIndex()}
	resp.LeaderAddress = (*s.members.Load())[st.Lead].Address
	resp.Members = s.membershipResponse().Members
	for _, m := range resp.Members {
		if pr, ok := st.Progress[m.Id]; ok {
			m.MatchIndex = pr.Match
			m.Answering = m.Id == s.cfg.MemberID || s.node.HeardFrom(m.Id)
			if m.Id != s.cfg.MemberID {
				m.Progress = strings.TrimPrefix(pr.State.String(), "State")
			}
		}
	}
	return resp, nil
}

func (s *Server) membershipResponse() *pb.MembershipResponse {
	members := *s.members.Load()
	resp := &pb.MembershipResponse{}
	for _, id := range slices.Sorted(maps.Keys(members)) {
		m := members[id]
		resp.Members = append(resp.Members, &pb.Member{Id: id, Address: m.Address, Learner: m.Learner})
	}
	return resp
}

// checkAdmin allows superusers only.
func (s *Server) checkAdmin(ctx context.Context, h *pb.Header, what string) error {
	if err := s.checkCaller(ctx, h); err != nil {
		return err
	}
	if !s.machine.FS().IsSuperuser(caller(h)) {
		return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may change the membership", what)
	}
	return nil
}

// AddMember implements MetaService: the new member joins as a learner,
// catches up (from a snapshot, typically), and is then made a voter, so
// that the group never counts on an empty member for its quorum.
func (s *Server) AddMember(ctx context.Context, r *pb.AddMemberRequest) (*pb.MembershipResponse, error) {
	m := r.GetMember()
	what := fmt.Sprintf("add member %d", m.GetId())
	if err := s.checkAdmin(ctx, r.Header, what); err != nil {
		return nil, err
	}
	if m.GetId() == 0 || m.GetAddress() == "" {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "%s: a member needs an id above 0 and an address", what)
	}
	cur, exists := (*s.members.Load())[m.GetId()]
	switch {
	case exists && !cur.Learner:
		if cur.Address != m.GetAddress() {
			return nil, fserr.Errorf(fserr.ErrExists, "%s: member %d already serves at %s", what, m.GetId(), cur.Address)
		}
		return s.membershipResponse(), nil // a retry of a finished add
	case !exists:
		if err := s.changeMembers(ctx, raftpb.ConfChangeType_ConfChangeAddLearnerNode, m.GetId(), m.GetAddress()); err != nil {
			return nil, err
		}
	}
	if m.GetLearner() {
		return s.membershipResponse(), nil
	}
	if err := s.waitCaughtUp(ctx, m.GetId()); err != nil {
		return nil, err
	}
	if err := s.changeMembers(ctx, raftpb.ConfChangeType_ConfChangeAddNode, m.GetId(), m.GetAddress()); err != nil {
		return nil, err
	}
	return s.membershipResponse(), nil
}

// RemoveMember implements MetaService. The leader removing itself first
// hands leadership over and answers NOT_LEADER, so the client's retry
// reaches the new leader, which removes it.
func (s *Server) RemoveMember(ctx context.Context, r *pb.RemoveMemberRequest) (*pb.MembershipResponse, error) {
	what := fmt.Sprintf("remove member %d", r.GetId())
	if err := s.checkAdmin(ctx, r.Header, what); err != nil {
		return nil, err
	}
	if _, ok := (*s.members.Load())[r.GetId()]; !ok {
		return s.membershipResponse(), nil // removed already (or a retry)
	}
	if !s.isLeader() {
		return nil, s.notLeader() // only the leader knows who answers
	}
	if !r.GetForce() {
		if err := s.quorumWithout(r.GetId(), what); err != nil {
			return nil, err
		}
	}
	if r.GetId() == s.cfg.MemberID {
		if err := s.handOver(ctx); err != nil {
			return nil, err
		}
		return nil, s.notLeader()
	}
	if err := s.changeMembers(ctx, raftpb.ConfChangeType_ConfChangeRemoveNode, r.GetId(), ""); err != nil {
		return nil, err
	}
	return s.membershipResponse(), nil
}

// quorumWithout refuses to remove member id when the voters left that this
// leader hears from would not be a majority of them: the group would stop
// serving until enough of the others came back.
func (s *Server) quorumWithout(id uint64, what string) error {
	var left, silent []uint64
	for mid, m := range *s.members.Load() {
		if m.Learner || mid == id {
			continue
		}
		left = append(left, mid)
		if mid != s.cfg.MemberID && !s.node.HeardFrom(mid) {
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

// TransferLeader implements MetaService.
func (s *Server) TransferLeader(ctx context.Context, r *pb.TransferLeaderRequest) (*pb.MembershipResponse, error) {
	what := fmt.Sprintf("transfer leadership to member %d", r.GetId())
	if err := s.checkAdmin(ctx, r.Header, what); err != nil {
		return nil, err
	}
	if m, ok := (*s.members.Load())[r.GetId()]; !ok || m.Learner {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "%s: no such voting member", what)
	}
	if lead, _ := s.node.Leader(); lead == r.GetId() {
		return s.membershipResponse(), nil
	}
	if err := s.transferTo(ctx, r.GetId()); err != nil {
		return nil, err
	}
	return s.membershipResponse(), nil
}

// handOver transfers leadership to the voter whose log is the most up to
// date.
func (s *Server) handOver(ctx context.Context) error {
	st := s.node.Status()
	var best uint64
	var match uint64
	for id, m := range *s.members.Load() {
		if pr, ok := st.Progress[id]; ok && id != s.cfg.MemberID && !m.Learner && pr.Match >= match {
			best, match = id, pr.Match
		}
	}
	if best == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "remove member %d: it is the only voter", s.cfg.MemberID)
	}
	return s.transferTo(ctx, best)
}

func (s *Server) transferTo(ctx context.Context, id uint64) error {
	if err := s.node.TransferLeadership(ctx, id); err != nil {
		return s.raftError(err)
	}
	return s.poll(ctx, 10*time.Second, func() bool {
		lead, _ := s.node.Leader()
		return lead == id
	}, fmt.Sprintf("member %d did not take over", id))
}

// waitCaughtUp waits until member id's log matches the leader's up to the
// commit index of the moment.
func (s *Server) waitCaughtUp(ctx context.Context, id uint64) error {
	target := s.node.Status().GetCommit()
	return s.poll(ctx, 10*time.Minute, func() bool {
		pr, ok := s.node.Status().Progress[id]
		return ok && pr.Match >= target
	}, fmt.Sprintf("member %d did not catch up (is it running with --join?)", id))
}

func (s *Server) poll(ctx context.Context, limit time.Duration, done func() bool, failure string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return fserr.Errorf(fserr.ErrUnavailable, "%s: %v", failure, ctx.Err())
		case <-s.node.Done():
			return s.nodeStopped()
		case <-t.C:
		}
	}
	return nil
}

// changeMembers proposes a configuration change and waits until it is
// applied.
func (s *Server) changeMembers(ctx context.Context, typ raftpb.ConfChangeType, id uint64, addr string) error {
	pid := s.nextProposal.Add(1)
	p := newProposal(nil)
	s.await(pid, p)
	defer s.unwait(pid)
	cc := &raftpb.ConfChange{Type: typ.Enum(), NodeId: proto.Uint64(id), Context: []byte(addr), Id: proto.Uint64(pid)}
	if err := s.node.ProposeConfChange(ctx, cc); err != nil {
		return s.raftError(err)
	}
	select {
	case <-p.done:
		return s.raftError(p.err)
	case <-ctx.Done():
		return ctx.Err()
	case <-s.node.Done():
		return s.nodeStopped()
	}
}

// raftError turns the node's ErrNotLeader into the answer clients act on:
// NOT_LEADER naming the leader.
func (s *Server) raftError(err error) error {
	if errors.Is(err, raftnode.ErrNotLeader) {
		return s.notLeader()
	}
	return err
}
