package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Mkdirs creates the directory path with permission perm masked by umask,
// and its missing parents when parents is set (their permission also grants
// the owner write and search, as in HDFS). It reports false when the
// directory existed already.
func (fs *FS) Mkdirs(tx kv.Txn, now int64, c Caller, ns, path string, perm, umask uint16, parents bool) (bool, error) {
	created, err := fs.mkdirs(tx, now, c, ns, path, perm&0o7777, umask, parents)
	if err != nil {
		return false, pathErr("mkdirs", path, err)
	}
	return created, nil
}

// mkdirs creates path's missing directories with mode perm masked by
// umask; the parents it creates also grant their owner write and search.
func (fs *FS) mkdirs(tx kv.Txn, now int64, c Caller, ns, path string, perm, umask uint16, parents bool) (bool, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return false, err
	}
	rec, err := getNamespace(tx, ns)
	if err != nil {
		return false, err
	}
	dir, err := getInode(tx, rec.Root)
	if err != nil {
		return false, err
	}
	i := 0
	for ; i < len(parts); i++ {
		if !dir.IsDir() {
			return false, ErrParentNotDir
		}
		if !fs.check(c, dir, accessExec) {
			return false, ErrPermission
		}
		child, err := lookup(tx, dir.ID, parts[i])
		if err != nil {
			return false, err
		}
		if child == nil {
			break
		}
		dir = child
	}
	switch {
	case i == len(parts) && dir.IsDir():
		return false, nil
	case i == len(parts):
		return false, ErrExists
	case !dir.IsDir():
		return false, ErrParentNotDir
	case !parents && i < len(parts)-1:
		return false, ErrNotFound
	case !fs.check(c, dir, accessWrite|accessExec):
		return false, ErrPermission
	}
	for ; i < len(parts); i++ {
		mode := createMode{perm &^ umask, perm}
		if i < len(parts)-1 {
			mode.masked, mode.unmasked = mode.masked|0o300, mode.unmasked|0o300
		}
		n, err := fs.newInode(tx, now, c, dir, parts[i], kvschema.TypeDir, mode)
		if err != nil {
			return false, err
		}
		if err := link(tx, now, dir.ID, n); err != nil {
			return false, err
		}
		if rec.IsCache() {
			// The service put the directory's marker in the bucket first.
			putObjectState(tx, n.ID, kvschema.ObjectState{Synced: now})
		}
		dir = n
	}
	return true, nil
}

// createMode is the mode a new entry is created with: masked by the
// caller's umask, and as asked (unmasked), which a directory with a default
// ACL filters its entries with instead (HDFS-6962's POSIX inheritance).
type createMode struct{ masked, unmasked uint16 }

// newInode allocates an inode to be linked into dir; like HDFS (and BSD) it
// takes the directory's group, and it takes dir's default ACL if it has
// one (inheritACL).
func (fs *FS) newInode(tx kv.Txn, now int64, c Caller, dir *kvschema.Inode, name string, typ kvschema.Type, mode createMode) (*kvschema.Inode, error) {
	id, err := nextID(tx)
	if err != nil {
		return nil, err
	}
	n := &kvschema.Inode{ID: id, Name: name, Type: typ, Perm: mode.masked, Owner: c.User,
		Group: dir.Group, Mtime: now, Atime: now}
	if hasDefaultACL(dir) {
		n.Perm = mode.unmasked
		inheritACL(dir, n)
	}
	return n, nil
}
