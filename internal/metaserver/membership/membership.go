// Package membership is the part of the namespace service that knows the
// Raft group's members: the membership as applied, kept in memory for the
// transport and for the leader hints of NOT_LEADER answers, the member
// status an administrator reads, and the changes an administrator asks for
// (add a member, remove one, hand the lead over), carried out through the
// node.
//
// It is not Raft and not the state: the membership lives in the replicated
// state (statemachine's member records, changed only by applied
// configuration changes), so that every member and every snapshot agree on
// it; Members is a copy that Load refreshes after each change. The checks
// of who may ask are the service's; the errors are fserr conditions.
package membership

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Members is the membership as applied, in memory. Its methods are safe
// for concurrent use; the maps they return are shared and must not be
// modified.
type Members struct {
	members atomic.Pointer[map[uint64]kvschema.Member]
	addrs   atomic.Pointer[map[uint64]string] // derived from members
}

// Load reads the membership from the state in r.
func (m *Members) Load(r kv.Reader) error {
	members, err := statemachine.Members(r)
	addrs := make(map[uint64]string, len(members))
	for id, mb := range members {
		addrs[id] = mb.Address
	}
	m.members.Store(&members)
	m.addrs.Store(&addrs)
	return err
}

// All returns the members by id (none before Load).
func (m *Members) All() map[uint64]kvschema.Member {
	if p := m.members.Load(); p != nil {
		return *p
	}
	return nil
}

// Addresses returns the members' addresses by id, for the transport: it
// asks once per message, so the map is built by Load and shared.
func (m *Members) Addresses() map[uint64]string {
	if p := m.addrs.Load(); p != nil {
		return *p
	}
	return nil
}

// Address returns member id's address ("" for no such member).
func (m *Members) Address(id uint64) string { return m.Addresses()[id] }

// Response returns the membership as an answer, sorted by id.
func (m *Members) Response() *pb.MembershipResponse {
	all := m.All()
	resp := &pb.MembershipResponse{}
	for _, id := range slices.Sorted(maps.Keys(all)) {
		mb := all[id]
		resp.Members = append(resp.Members, &pb.Member{Id: id, Address: mb.Address, Learner: mb.Learner})
	}
	return resp
}
