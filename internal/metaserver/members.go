package metaserver

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/internal/fserr"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The membership requests, which internal/metaserver/membership carries
// out once a superuser asked.

// status answers Status: this member's view of the group.
func (m *Member) status() *pb.StatusResponse {
	resp := m.admin.Status(m.core.applied.Load(), m.core.node.LastIndex())
	resp.Version, resp.ClusterId = Version, m.cfg.ClusterID
	return resp
}

// checkAdmin allows superusers only.
func (m *Member) checkAdmin(ctx context.Context, h *pb.Header, what string) error {
	if err := m.tokens.CheckCaller(ctx, h); err != nil {
		return err
	}
	if !m.core.IsSuperuser(sm.CallerOf(h)) {
		return fserr.Errorf(fserr.ErrPermission, "%s: only a superuser may change the membership", what)
	}
	return nil
}

func (m *Member) addMember(ctx context.Context, r *pb.AddMemberRequest) (*pb.MembershipResponse, error) {
	if err := m.checkAdmin(ctx, r.GetHeader(), fmt.Sprintf("add member %d", r.GetMember().GetId())); err != nil {
		return nil, err
	}
	return m.admin.Add(ctx, r.GetMember())
}

func (m *Member) removeMember(ctx context.Context, r *pb.RemoveMemberRequest) (*pb.MembershipResponse, error) {
	if err := m.checkAdmin(ctx, r.GetHeader(), fmt.Sprintf("remove member %d", r.GetId())); err != nil {
		return nil, err
	}
	return m.admin.Remove(ctx, r.GetId(), r.GetForce())
}

func (m *Member) transferLeader(ctx context.Context, r *pb.TransferLeaderRequest) (*pb.MembershipResponse, error) {
	if err := m.checkAdmin(ctx, r.GetHeader(), fmt.Sprintf("transfer leadership to member %d", r.GetId())); err != nil {
		return nil, err
	}
	return m.admin.Transfer(ctx, r.GetId())
}
