package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// ACLOp is a change to an ACL: one of HDFS's five.
type ACLOp uint8

// The changes, as Hadoop's FileSystem names them.
const (
	// ACLSet replaces the ACL of each scope the spec has entries of
	// (setAcl; an empty spec removes the ACL, as HDFS logs removeAcl).
	ACLSet ACLOp = iota + 1
	// ACLModify adds the spec's entries, replacing those of the same
	// scope, type and name (modifyAclEntries).
	ACLModify
	// ACLRemoveEntries removes the entries the spec names
	// (removeAclEntries; the spec's permissions are ignored).
	ACLRemoveEntries
	// ACLRemoveDefault removes the default ACL (removeDefaultAcl).
	ACLRemoveDefault
	// ACLRemove removes every entry but the base ones (removeAcl).
	ACLRemove
)

var aclOpNames = map[ACLOp]string{ACLSet: "setAcl", ACLModify: "modifyAclEntries",
	ACLRemoveEntries: "removeAclEntries", ACLRemoveDefault: "removeDefaultAcl", ACLRemove: "removeAcl"}

// ModifyACL changes path's ACL by op with spec; only its owner or a
// superuser may (HDFS's checkOwner).
func (fs *FS) ModifyACL(tx kv.Txn, c Caller, ns, path string, op ACLOp, spec []ACLEntry) error {
	name, ok := aclOpNames[op]
	if !ok {
		return pathErr("modifyAcl", path, ErrInvalidArgument)
	}
	return fs.setAttr(tx, c, ns, path, name, func(n *kvschema.Inode) error {
		if n.Owner != c.User && !fs.IsSuperuser(c) {
			return notOwner(c, path)
		}
		return changeACL(n, op, spec)
	})
}

func changeACL(n *kvschema.Inode, op ACLOp, spec []ACLEntry) error {
	var acl []ACLEntry
	var err error
	switch {
	case op == ACLRemove, op == ACLSet && len(spec) == 0:
		removeACL(n)
		return nil
	case op == ACLSet:
		acl, err = replaceACL(logicalACL(n), spec)
	case op == ACLModify:
		acl, err = mergeACLEntries(logicalACL(n), spec)
	case op == ACLRemoveEntries:
		acl, err = filterACLEntries(logicalACL(n), spec)
	case op == ACLRemoveDefault:
		acl, err = filterDefaultACL(logicalACL(n))
	}
	if err != nil {
		return err
	}
	return setLogicalACL(n, acl)
}
