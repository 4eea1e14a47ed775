package client

import (
	"context"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/rpcerr"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// CreateNamespace creates a namespace (superusers only): info names it,
// its mode and its bucket, and in cache mode its sync interval.
func (c *Client) CreateNamespace(ctx context.Context, info *pb.NamespaceInfo) error {
	_, err := call(func() (*pb.CreateNamespaceResponse, error) {
		return c.meta.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Header: c.header, Namespace: info})
	})
	return err
}

// DeleteNamespace deletes a namespace (superusers only) as mode says:
// only if it is empty (fserr.ErrNotEmpty otherwise), to the trash, or for
// good at once; its content goes in the background. It returns what the
// namespace held.
func (c *Client) DeleteNamespace(ctx context.Context, name string, mode pb.NamespaceDeleteMode) (*pb.DeleteNamespaceResponse, error) {
	return call(func() (*pb.DeleteNamespaceResponse, error) {
		return c.meta.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Header: c.header, Name: name, Mode: mode})
	})
}

// RestoreNamespace brings a namespace back from the trash (superusers
// only).
func (c *Client) RestoreNamespace(ctx context.Context, name string) error {
	_, err := call(func() (*pb.RestoreNamespaceResponse, error) {
		return c.meta.RestoreNamespace(ctx, &pb.RestoreNamespaceRequest{Header: c.header, Name: name})
	})
	return err
}

// ServerDefaults returns the settings of the service that clients follow,
// such as the trash interval.
func (c *Client) ServerDefaults(ctx context.Context) (*pb.GetServerDefaultsResponse, error) {
	return call(func() (*pb.GetServerDefaultsResponse, error) {
		return c.meta.GetServerDefaults(ctx, &pb.GetServerDefaultsRequest{Header: c.hdr("")})
	})
}

// Namespaces lists the namespaces.
func (c *Client) Namespaces(ctx context.Context) ([]*pb.NamespaceInfo, error) {
	r, err := call(func() (*pb.ListNamespacesResponse, error) {
		return c.meta.ListNamespaces(ctx, &pb.ListNamespacesRequest{Header: c.header})
	})
	return r.GetNamespaces(), err
}

// ServerStatus reports what the service holds and does: each namespace's
// files, directories and bytes, the work its leader queued, and the
// leader's version, start and live workers (superusers only).
func (c *Client) ServerStatus(ctx context.Context) (*pb.GetServerStatusResponse, error) {
	return call(func() (*pb.GetServerStatusResponse, error) {
		return c.meta.GetServerStatus(ctx, &pb.GetServerStatusRequest{Header: c.header})
	})
}

// Status reports the state of the member the client is connected to.
func (c *Client) Status(ctx context.Context) (*pb.StatusResponse, error) {
	return call(func() (*pb.StatusResponse, error) {
		return c.meta.Status(ctx, &pb.StatusRequest{})
	})
}

// AddMember adds a member to the namespace service's Raft group
// (superusers only). It returns once the member caught up and votes, or,
// with learner, once it was added as a non-voting learner.
func (c *Client) AddMember(ctx context.Context, id uint64, addr string, learner bool) ([]*pb.Member, error) {
	r, err := call(func() (*pb.MembershipResponse, error) {
		return c.meta.AddMember(ctx, &pb.AddMemberRequest{Header: c.header,
			Member: &pb.Member{Id: id, Address: addr, Learner: learner}})
	})
	return r.GetMembers(), err
}

// RemoveMember removes a member from the group (superusers only); removing
// the leader hands leadership over first. Unless force, the service refuses
// (fserr.ErrQuorum) when the voters left that it hears from would not be a
// majority of them.
func (c *Client) RemoveMember(ctx context.Context, id uint64, force bool) ([]*pb.Member, error) {
	r, err := call(func() (*pb.MembershipResponse, error) {
		return c.meta.RemoveMember(ctx, &pb.RemoveMemberRequest{Header: c.header, Id: id, Force: force})
	})
	return r.GetMembers(), err
}

// TransferLeader makes member id the leader (superusers only).
func (c *Client) TransferLeader(ctx context.Context, id uint64) error {
	_, err := call(func() (*pb.MembershipResponse, error) {
		return c.meta.TransferLeader(ctx, &pb.TransferLeaderRequest{Header: c.header, Id: id})
	})
	return err
}

// MemberStatus is one member's answer to a status request, or why it gave
// none.
type MemberStatus struct {
	Address string
	Status  *pb.StatusResponse
	Err     error
}

// MemberStatuses asks every member for its status: those the client was
// given and those the group's configuration names, each directly (not
// through the leader), in address order, each within the client's
// ConnectTimeout.
func (c *Client) MemberStatuses(ctx context.Context) []MemberStatus {
	var out []MemberStatus
	ask := func(addr string) MemberStatus {
		ms := MemberStatus{Address: addr}
		conn, err := c.members.conn(addr)
		if err == nil {
			// A member that accepts no connection is reported, not waited for.
			ctx, cancel := context.WithTimeout(ctx, c.members.connectTimeout)
			ms.Status, err = pb.NewMetaServiceClient(conn).Status(ctx, &pb.StatusRequest{})
			cancel()
		}
		ms.Err = rpcerr.FromStatus(err)
		return ms
	}
	seen := map[string]bool{}
	queue := slices.Clone(c.members.addrs)
	for len(queue) > 0 {
		addr := queue[0]
		queue = queue[1:]
		if seen[addr] {
			continue
		}
		seen[addr] = true
		ms := ask(addr)
		out = append(out, ms)
		for _, m := range ms.Status.GetMembers() {
			if !seen[m.Address] {
				queue = append(queue, m.Address)
			}
		}
	}
	slices.SortFunc(out, func(a, b MemberStatus) int { return strings.Compare(a.Address, b.Address) })
	return out
}
