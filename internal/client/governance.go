package client

import (
	"context"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Quotas, extended attributes, ACLs and storage policies, as HDFS's
// (docs/semantics.md). The service checks them all; a refusal comes back
// as its fserr condition: a quota's as fserr.ErrNSQuotaExceeded or
// fserr.ErrDSQuotaExceeded (fserr.IsQuota: EDQUOT to a POSIX caller), a
// missing attribute's as fserr.ErrNoXAttr (ENODATA), an ACL HDFS would
// refuse as fserr.ErrInvalidACL.

// NoQuota is a limit not set (HDFS's QUOTA_RESET): SetQuota clears a
// limit with it. QuotaDontSet leaves a limit as it is.
const (
	NoQuota      = -1
	QuotaDontSet = 1<<63 - 1
)

// Quota is a directory's limits on names (itself and every entry below
// it) and on space (the bytes of the files below it, counted once);
// NoQuota for none.
type Quota struct {
	Names, Space int64
}

// SetQuota sets directory path's quotas (a superuser's call).
func (c *Client) SetQuota(ctx context.Context, path string, names, space int64) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.SetQuotaResponse, error) {
		return c.meta.SetQuota(ctx, &pb.SetQuotaRequest{Header: c.hdr(ns), Path: p, Names: names, Space: space})
	})
	return err
}

// XAttr is an extended attribute: its name with its namespace
// ("user.x") and its value.
type XAttr struct {
	Name  string
	Value []byte
}

// XAttrSetFlag says whether SetXAttr may create an attribute, replace one,
// or (XAttrCreate|XAttrReplace, or 0) either.
type XAttrSetFlag uint8

// The flags.
const (
	XAttrCreate  XAttrSetFlag = 1
	XAttrReplace XAttrSetFlag = 2
)

// SetXAttr sets path's attribute name to value.
func (c *Client) SetXAttr(ctx context.Context, path, name string, value []byte, flag XAttrSetFlag) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.SetXAttrResponse, error) {
		return c.meta.SetXAttr(ctx, &pb.SetXAttrRequest{Header: c.hdr(ns), Path: p, Xattr: &pb.XAttr{Name: name, Value: value},
			Create: flag&XAttrCreate != 0, Replace: flag&XAttrReplace != 0})
	})
	return err
}

// RemoveXAttr removes path's attribute name.
func (c *Client) RemoveXAttr(ctx context.Context, path, name string) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.RemoveXAttrResponse, error) {
		return c.meta.RemoveXAttr(ctx, &pb.RemoveXAttrRequest{Header: c.hdr(ns), Path: p, Name: name})
	})
	return err
}

// GetXAttrs returns path's attributes called names, with their values, or
// every one the caller may see if names is empty, in name order.
func (c *Client) GetXAttrs(ctx context.Context, path string, names ...string) ([]XAttr, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.GetXAttrsResponse, error) {
		return c.meta.GetXAttrs(ctx, &pb.GetXAttrsRequest{Header: c.hdr(ns), Path: p, Names: names})
	})
	if err != nil {
		return nil, err
	}
	out := make([]XAttr, len(r.GetXattrs()))
	for i, x := range r.GetXattrs() {
		out[i] = XAttr{Name: x.GetName(), Value: x.GetValue()}
	}
	return out, nil
}

// ListXAttrs returns the names of path's attributes the caller may see.
func (c *Client) ListXAttrs(ctx context.Context, path string) ([]string, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.ListXAttrsResponse, error) {
		return c.meta.ListXAttrs(ctx, &pb.ListXAttrsRequest{Header: c.hdr(ns), Path: p})
	})
	return r.GetNames(), err
}

// ACLType is the type of an ACL entry.
type ACLType uint8

// The types, as HDFS's AclEntryType.
const (
	ACLUser ACLType = iota + 1
	ACLGroup
	ACLMask
	ACLOther
)

// ACLEntry is one entry of an ACL.
type ACLEntry struct {
	Default bool // of a directory's default ACL
	Type    ACLType
	Name    string // the named user or group; empty for the unnamed entries
	Perm    uint8  // rwx bits
}

// ACLOp is what ModifyACL does, as HDFS's calls.
type ACLOp uint8

// The operations.
const (
	ACLSet           = ACLOp(pb.AclOp_ACL_OP_SET)
	ACLModify        = ACLOp(pb.AclOp_ACL_OP_MODIFY)
	ACLRemoveEntries = ACLOp(pb.AclOp_ACL_OP_REMOVE_ENTRIES)
	ACLRemoveDefault = ACLOp(pb.AclOp_ACL_OP_REMOVE_DEFAULT)
	ACLRemove        = ACLOp(pb.AclOp_ACL_OP_REMOVE)
)

// ModifyACL changes path's ACL: setAcl, modifyAclEntries,
// removeAclEntries (entries' permissions ignored), removeDefaultAcl or
// removeAcl (entries unused).
func (c *Client) ModifyACL(ctx context.Context, path string, op ACLOp, entries []ACLEntry) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	req := &pb.ModifyAclRequest{Header: c.hdr(ns), Path: p, Op: pb.AclOp(op)}
	for _, e := range entries {
		req.Entries = append(req.Entries, &pb.AclEntry{DefaultScope: e.Default, Type: pb.AclEntryType(e.Type), Name: e.Name,
			Permission: uint32(e.Perm)})
	}
	_, err = call(func() (*pb.ModifyAclResponse, error) { return c.meta.ModifyAcl(ctx, req) })
	return err
}

// ACLStatus is HDFS's AclStatus: the entries the mode bits do not hold
// (named entries and the owning group of an extended access ACL, whose
// mask is then Perm's group bits; every default entry), sorted.
type ACLStatus struct {
	Owner, Group string
	Perm         uint32
	Entries      []ACLEntry
}

// ACLStatus returns path's ACL.
func (c *Client) ACLStatus(ctx context.Context, path string) (*ACLStatus, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	r, err := call(func() (*pb.GetAclStatusResponse, error) {
		return c.meta.GetAclStatus(ctx, &pb.GetAclStatusRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return nil, err
	}
	st := &ACLStatus{Owner: r.GetOwner(), Group: r.GetGroup(), Perm: r.GetPermission()}
	for _, e := range r.GetEntries() {
		st.Entries = append(st.Entries, ACLEntry{Default: e.GetDefaultScope(), Type: ACLType(e.GetType()), Name: e.GetName(),
			Perm: uint8(e.GetPermission() & 7)})
	}
	return st, nil
}

// StoragePolicy is one of the service's storage policies.
type StoragePolicy struct {
	ID           uint32
	Name         string
	Pin, NoCache bool
	StorageClass string // the bucket's; "" for its default
	Description  string
}

func policyFromProto(p *pb.StoragePolicy) StoragePolicy {
	return StoragePolicy{ID: p.GetId(), Name: p.GetName(), Pin: p.GetPin(), NoCache: p.GetNoCache(),
		StorageClass: p.GetStorageClass(), Description: p.GetDescription()}
}

// SetStoragePolicy sets path's storage policy by name; "" unsets it.
func (c *Client) SetStoragePolicy(ctx context.Context, path, policy string) error {
	ns, p, err := splitPath(path)
	if err != nil {
		return err
	}
	_, err = call(func() (*pb.SetStoragePolicyResponse, error) {
		return c.meta.SetStoragePolicy(ctx, &pb.SetStoragePolicyRequest{Header: c.hdr(ns), Path: p, Policy: policy})
	})
	return err
}

// StoragePolicy returns path's effective storage policy.
func (c *Client) StoragePolicy(ctx context.Context, path string) (StoragePolicy, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return StoragePolicy{}, err
	}
	r, err := call(func() (*pb.GetStoragePolicyResponse, error) {
		return c.meta.GetStoragePolicy(ctx, &pb.GetStoragePolicyRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return StoragePolicy{}, err
	}
	return policyFromProto(r.GetPolicy()), nil
}

// StoragePolicies returns the service's storage policies.
func (c *Client) StoragePolicies(ctx context.Context) ([]StoragePolicy, error) {
	r, err := call(func() (*pb.GetStoragePoliciesResponse, error) {
		return c.meta.GetStoragePolicies(ctx, &pb.GetStoragePoliciesRequest{Header: c.hdr("")})
	})
	if err != nil {
		return nil, err
	}
	out := make([]StoragePolicy, len(r.GetPolicies()))
	for i, p := range r.GetPolicies() {
		out[i] = policyFromProto(p)
	}
	return out, nil
}
