package namespace

import (
	"slices"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// SetPermission sets path's mode bits; only its owner or a superuser may.
func (fs *FS) SetPermission(tx kv.Txn, c Caller, ns, path string, perm uint16) error {
	return fs.setAttr(tx, c, ns, path, "setPermission", func(n *kvschema.Inode) error {
		if n.Owner != c.User && !fs.IsSuperuser(c) {
			return notOwner(c, path)
		}
		n.Perm = perm & 0o7777
		return nil
	})
}

// SetOwner sets path's owner and group; an empty value leaves it as it is.
// Only a superuser changes the owner; an owner may change the group to one
// of its own groups.
func (fs *FS) SetOwner(tx kv.Txn, c Caller, ns, path, owner, group string) error {
	return fs.setAttr(tx, c, ns, path, "setOwner", func(n *kvschema.Inode) error {
		super := fs.IsSuperuser(c)
		if n.Owner != c.User && !super {
			return notOwner(c, path) // HDFS checkOwner: even a no-op needs the owner
		}
		if owner != "" && owner != n.Owner && !super {
			return fserr.Errorf(ErrPermission, "User %s is not a super user (non-super user cannot change owner).", c.User)
		}
		if group != "" && group != n.Group && !super && !slices.Contains(c.Groups, group) {
			return fserr.Errorf(ErrPermission, "User %s does not belong to %s", c.User, group)
		}
		if owner != "" {
			n.Owner = owner
		}
		if group != "" {
			n.Group = group
		}
		return nil
	})
}

// SetTimes sets path's modification and access times (milliseconds; -1
// leaves a time as it is); the caller needs write permission.
func (fs *FS) SetTimes(tx kv.Txn, c Caller, ns, path string, mtime, atime int64) error {
	return fs.setAttr(tx, c, ns, path, "setTimes", func(n *kvschema.Inode) error {
		if !fs.check(c, n, accessWrite) && n.Owner != c.User {
			return ErrPermission
		}
		if mtime != -1 {
			n.Mtime = mtime
		}
		if atime != -1 {
			n.Atime = atime
		}
		return nil
	})
}

// notOwner is the refusal of what only path's owner (or a superuser) may
// do, in HDFS's words, as the reasons of SetOwner's other refusals.
func notOwner(c Caller, path string) error {
	return fserr.Errorf(ErrPermission, "Permission denied. user=%s is not the owner of inode=%s", c.User, path)
}

func (fs *FS) setAttr(tx kv.Txn, c Caller, ns, path, op string, set func(*kvschema.Inode) error) error {
	res, err := fs.resolveExisting(tx, c, ns, path)
	if err == nil {
		err = set(res.node)
	}
	if err != nil {
		return pathErr(op, path, err)
	}
	putInode(tx, res.node)
	return nil
}
