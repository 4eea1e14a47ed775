package namespace

import (
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/storagepolicy"
)

// Storage policies (internal/storagepolicy), as HDFS's: set on a file or a
// directory, and taken by a file or directory without one from its
// nearest directory that has one (WARM if none has). A file's effective
// policy is what its writers' and readers' block tokens carry, so the
// operations that hand those out (create, append, flush, open) report it:
// from the directories their lookup read anyway, with no read of its own.

// SetStoragePolicy sets path's storage policy, or with Unspecified takes
// it off (HDFS's unsetStoragePolicy); the caller needs write permission.
// A policy that keeps blocks in a storage class needs a bucket that has
// them.
func (fs *FS) SetStoragePolicy(tx kv.Txn, c Caller, ns, path string, id storagepolicy.ID) error {
	return fs.setAttr(tx, c, ns, path, "setStoragePolicy", func(n *kvschema.Inode) error {
		if !fs.check(c, n, accessWrite) {
			return ErrPermission
		}
		rec, err := getNamespace(tx, ns)
		if err != nil {
			return err
		}
		if err := policyAllowed(rec, id); err != nil {
			return err
		}
		n.Policy = uint8(id)
		return nil
	})
}

// policyAllowed says why namespace rec cannot take policy id, if it cannot.
func policyAllowed(rec *kvschema.Namespace, id storagepolicy.ID) error {
	if id == storagepolicy.Unspecified {
		return nil
	}
	p, ok := storagepolicy.ByID(id)
	switch {
	case !ok:
		return fserr.Errorf(ErrInvalidArgument, "no storage policy %d", id)
	case rec.IsCache():
		return fserr.Errorf(ErrUnsupported, "storage policies need a block-mode namespace: a cache-mode namespace's files are its bucket's objects")
	case p.StorageClass != "" && !storagepolicy.StoreHasClasses(rec.StoreURI):
		return fserr.Errorf(ErrUnsupported,
			"storage policy %s keeps blocks in the bucket's %s storage class, and the namespace's bucket (%s) has no storage classes: only s3:// buckets have them",
			p.Name, p.StorageClass, rec.StoreURI)
	}
	return nil
}

// StoragePolicy returns path's effective storage policy: its own, or its
// nearest directory's, or Unspecified (the default's).
func (fs *FS) StoragePolicy(r kv.Reader, c Caller, ns, path string) (storagepolicy.ID, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return 0, pathErr("getStoragePolicy", path, err)
	}
	return effectivePolicy(res.node, res.dirs), nil
}

// effectivePolicy is n's policy, or its nearest directory's among dirs
// (root first, n's directory last), or Unspecified: the default's.
func effectivePolicy(n *kvschema.Inode, dirs []*kvschema.Inode) storagepolicy.ID {
	if n != nil && n.Policy != 0 {
		return storagepolicy.ID(n.Policy)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if dirs[i].Policy != 0 {
			return storagepolicy.ID(dirs[i].Policy)
		}
	}
	return storagepolicy.Unspecified
}

// policyOf is effectivePolicy for a resolved path whose directories the
// lookup did not keep (a held file found by its inode): it reads them.
func policyOf(r kv.Reader, res *resolved) (storagepolicy.ID, error) {
	if res.node.Policy != 0 || len(res.dirs) > 0 || res.node.Parent == 0 {
		return effectivePolicy(res.node, res.dirs), nil
	}
	for id := res.node.Parent; id != 0; {
		d, err := getInode(r, id)
		if err != nil {
			return 0, err
		}
		if d.Policy != 0 {
			return storagepolicy.ID(d.Policy), nil
		}
		id = d.Parent
	}
	return storagepolicy.Unspecified, nil
}
