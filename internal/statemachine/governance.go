package statemachine

import (
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/storagepolicy"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The operations of HDFS's governance features: quotas, extended
// attributes, ACLs and storage policies (namespace's quota.go, xattr.go,
// acl*.go and policy.go hold their rules).
var (
	SetQuota = mutation(Op{Name: "SetQuota"},
		func(r *pb.SetQuotaRequest) *pb.Command { return &pb.Command{Op: &pb.Command_SetQuota{SetQuota: r}} },
		(*pb.Command).GetSetQuota,
		func(e env, tx kv.Txn, r *pb.SetQuotaRequest) (None, error) {
			h := r.GetHeader()
			return None{}, e.fs.SetQuota(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetNames(), r.GetSpace())
		},
		func(None) *pb.SetQuotaResponse { return &pb.SetQuotaResponse{} }, keptNothing[None]())
	SetXAttr = mutation(Op{Name: "SetXAttr"},
		func(r *pb.SetXAttrRequest) *pb.Command { return &pb.Command{Op: &pb.Command_SetXattr{SetXattr: r}} },
		(*pb.Command).GetSetXattr,
		func(e env, tx kv.Txn, r *pb.SetXAttrRequest) (None, error) {
			h := r.GetHeader()
			return None{}, e.fs.SetXAttr(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetXattr().GetName(),
				r.GetXattr().GetValue(), xattrFlags(r))
		},
		func(None) *pb.SetXAttrResponse { return &pb.SetXAttrResponse{} }, keptNothing[None]())
	RemoveXAttr = mutation(Op{Name: "RemoveXAttr"},
		func(r *pb.RemoveXAttrRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_RemoveXattr{RemoveXattr: r}}
		},
		(*pb.Command).GetRemoveXattr,
		func(e env, tx kv.Txn, r *pb.RemoveXAttrRequest) (None, error) {
			h := r.GetHeader()
			return None{}, e.fs.RemoveXAttr(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), r.GetName())
		},
		func(None) *pb.RemoveXAttrResponse { return &pb.RemoveXAttrResponse{} }, keptNothing[None]())
	ModifyAcl = mutation(Op{Name: "ModifyAcl"},
		func(r *pb.ModifyAclRequest) *pb.Command { return &pb.Command{Op: &pb.Command_ModifyAcl{ModifyAcl: r}} },
		(*pb.Command).GetModifyAcl,
		func(e env, tx kv.Txn, r *pb.ModifyAclRequest) (None, error) {
			h := r.GetHeader()
			return None{}, e.fs.ModifyACL(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), namespace.ACLOp(r.GetOp()),
				ACLFromProto(r.GetEntries()))
		},
		func(None) *pb.ModifyAclResponse { return &pb.ModifyAclResponse{} }, keptNothing[None]())
	SetStoragePolicy = mutation(Op{Name: "SetStoragePolicy"},
		func(r *pb.SetStoragePolicyRequest) *pb.Command {
			return &pb.Command{Op: &pb.Command_SetStoragePolicy{SetStoragePolicy: r}}
		},
		(*pb.Command).GetSetStoragePolicy, applySetStoragePolicy,
		func(None) *pb.SetStoragePolicyResponse { return &pb.SetStoragePolicyResponse{} }, keptNothing[None]())

	GetXAttrs          = query(Op{Name: "GetXAttrs"}, readXAttrs)
	ListXAttrs         = query(Op{Name: "ListXAttrs"}, readXAttrNames)
	GetAclStatus       = query(Op{Name: "GetAclStatus"}, readACLStatus)
	GetStoragePolicy   = query(Op{Name: "GetStoragePolicy"}, readStoragePolicy)
	GetStoragePolicies = query(Op{Name: "GetStoragePolicies"}, readStoragePolicies)
)

// xattrFlags is a request's XAttrSetFlag: neither flag allows both.
func xattrFlags(r *pb.SetXAttrRequest) namespace.XAttrFlag {
	var f namespace.XAttrFlag
	if r.GetCreate() {
		f |= namespace.XAttrCreate
	}
	if r.GetReplace() {
		f |= namespace.XAttrReplace
	}
	if f == 0 {
		f = namespace.XAttrCreate | namespace.XAttrReplace
	}
	return f
}

func applySetStoragePolicy(e env, tx kv.Txn, r *pb.SetStoragePolicyRequest) (None, error) {
	h := r.GetHeader()
	id := storagepolicy.Unspecified
	if r.GetPolicy() != "" {
		p, ok := storagepolicy.ByName(r.GetPolicy())
		if !ok {
			return None{}, &namespace.PathError{Op: "setStoragePolicy", Path: r.GetPath(),
				Err: fserr.Errorf(fserr.ErrInvalidArgument, "Cannot find a block policy with the name %s", r.GetPolicy())}
		}
		id = p.ID
	}
	return None{}, e.fs.SetStoragePolicy(tx, CallerOf(h), h.GetNamespace(), r.GetPath(), id)
}

func readXAttrs(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.GetXAttrsRequest) (*pb.GetXAttrsResponse, error) {
	all, err := m.fs.GetXAttrs(r, c, ns, req.GetPath(), req.GetNames())
	if err != nil {
		return nil, err
	}
	resp := &pb.GetXAttrsResponse{Xattrs: make([]*pb.XAttr, len(all))}
	for i, x := range all {
		resp.Xattrs[i] = &pb.XAttr{Name: x.Name, Value: x.Value}
	}
	return resp, nil
}

func readXAttrNames(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.ListXAttrsRequest) (*pb.ListXAttrsResponse, error) {
	names, err := m.fs.ListXAttrs(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &pb.ListXAttrsResponse{Names: names}, nil
}

// readACLStatus answers from the inode: HDFS's getAclStatus needs only the
// search permission a stat needs.
func readACLStatus(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.GetAclStatusRequest) (*pb.GetAclStatusResponse, error) {
	n, err := m.fs.Stat(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &pb.GetAclStatusResponse{Owner: n.Owner, Group: n.Group, Permission: uint32(n.Perm), Entries: ACLToProto(n.ACL)}, nil
}

func readStoragePolicy(m *Machine, r kv.Reader, c namespace.Caller, ns string, req *pb.GetStoragePolicyRequest) (*pb.GetStoragePolicyResponse, error) {
	id, err := m.fs.StoragePolicy(r, c, ns, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &pb.GetStoragePolicyResponse{Policy: PolicyToProto(storagepolicy.Of(id))}, nil
}

func readStoragePolicies(*Machine, kv.Reader, namespace.Caller, string, *pb.GetStoragePoliciesRequest) (*pb.GetStoragePoliciesResponse, error) {
	resp := &pb.GetStoragePoliciesResponse{}
	for _, p := range storagepolicy.All() {
		resp.Policies = append(resp.Policies, PolicyToProto(p))
	}
	return resp, nil
}

// PolicyToProto is the wire form of p.
func PolicyToProto(p storagepolicy.Policy) *pb.StoragePolicy {
	return &pb.StoragePolicy{Id: uint32(p.ID), Name: p.Name, Pin: p.Pin, NoCache: p.NoCache, StorageClass: p.StorageClass,
		Description: p.Doc}
}

// ACLToProto is the wire form of ACL entries.
func ACLToProto(acl []kvschema.ACLEntry) []*pb.AclEntry {
	out := make([]*pb.AclEntry, len(acl))
	for i, e := range acl {
		out[i] = &pb.AclEntry{DefaultScope: e.Default, Type: pb.AclEntryType(e.Type), Name: e.Name, Permission: uint32(e.Perm)}
	}
	return out
}

// ACLFromProto is ACL entries from the wire; a type or permission out of
// range stays out of range, for the namespace to refuse.
func ACLFromProto(in []*pb.AclEntry) []kvschema.ACLEntry {
	out := make([]kvschema.ACLEntry, len(in))
	for i, e := range in {
		perm := e.GetPermission()
		if perm > 0xff {
			perm = 0xff
		}
		typ := e.GetType()
		if typ < 0 || typ > 0xff {
			typ = 0xff
		}
		out[i] = kvschema.ACLEntry{Default: e.GetDefaultScope(), Type: kvschema.ACLType(typ), Name: e.GetName(), Perm: uint8(perm)}
	}
	return out
}
