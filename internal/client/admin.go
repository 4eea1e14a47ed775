package client

import (
	"context"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/rpcerr"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// CreateNamespace creates a namespace (superusers only). mode is "block"
// or "cache"; storeURI names its bucket.
func (c *Client) CreateNamespace(ctx context.Context, name string, mode pb.NamespaceMode, storeURI string) error {
	_, err := call(func() (*pb.CreateNamespaceResponse, error) {
		return c.meta.CreateNamespace(ctx, &pb.CreateNamespaceRequest{Header: c.header,
			Namespace: &pb.NamespaceInfo{Name: name, Mode: mode, StoreUri: storeURI}})
	})
	return err
}

// DeleteNamespace deletes a namespace and, in the background, its content.
func (c *Client) DeleteNamespace(ctx context.Context, name string) error {
	_, err := call(func() (*pb.DeleteNamespaceResponse, error) {
		return c.meta.DeleteNamespace(ctx, &pb.DeleteNamespaceRequest{Header: c.header, Name: name})
	})
	return err
}

// Namespaces lists the namespaces.
func (c *Client) Namespaces(ctx context.Context) ([]*pb.NamespaceInfo, error) {
	r, err := call(func() (*pb.ListNamespacesResponse, error) {
		return c.meta.ListNamespaces(ctx, &pb.ListNamespacesRequest{Header: c.header})
	})
	return r.GetNamespaces(), err
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
// the leader hands leadership over first.
func (c *Client) RemoveMember(ctx context.Context, id uint64) ([]*pb.Member, error) {
	r, err := call(func() (*pb.MembershipResponse, error) {
		return c.meta.RemoveMember(ctx, &pb.RemoveMemberRequest{Header: c.header, Id: id})
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
