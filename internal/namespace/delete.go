package namespace

import (
	"errors"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Delete removes path; a non-empty directory only when recursive. It reports
// false when nothing was there. The operation is O(depth) whatever the size
// of the subtree: a non-empty directory is detached at once, counted out of
// its ancestors, and its content purged later by Purge. Files' blocks go to
// the garbage queue, to be removed from the bucket after this commits.
//
// The caller needs write and search permission on the parent and, for a
// non-empty directory, rwx on it and on every non-empty directory below it,
// as in HDFS: a superuser's delete stays O(depth), anyone else's walks the
// subtree's directories (checkSubtree).
func (fs *FS) Delete(tx kv.Txn, now int64, c Caller, ns, path string, recursive bool) (bool, error) {
	return fs.DeleteInode(tx, now, c, ns, path, recursive, 0)
}

// DeleteInode is Delete that, when ino is not 0, deletes only if path still
// names inode ino, and otherwise reports not deleted.
func (fs *FS) DeleteInode(tx kv.Txn, now int64, c Caller, ns, path string, recursive bool, ino uint64) (bool, error) {
	ok, err := fs.delete(tx, now, c, ns, path, recursive, ino)
	if err != nil {
		return false, pathErr("delete", path, err)
	}
	return ok, nil
}

func (fs *FS) delete(tx kv.Txn, now int64, c Caller, ns, path string, recursive bool, ino uint64) (bool, error) {
	res, err := fs.resolveExisting(tx, c, ns, path)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n := res.node
	switch {
	case ino != 0 && n.ID != ino:
		return false, nil
	case res.parent == nil:
		return false, ErrRoot
	case n.IsDir() && n.Children > 0 && !recursive:
		return false, ErrNotEmpty
	case !fs.check(c, res.parent, accessWrite|accessExec) || !fs.checkSticky(c, res.parent, n):
		return false, ErrPermission
	}
	if n.IsDir() && n.Children > 0 {
		if ok, err := fs.checkSubtree(tx, c, n, accessRead|accessWrite|accessExec); err != nil || !ok {
			return false, errors.Join(err, permIfNil(err))
		}
	}
	if err := unlink(tx, now, n); err != nil {
		return false, err
	}
	return true, drop(tx, n, blockStore(res.ns))
}

func permIfNil(err error) error {
	if err == nil {
		return ErrPermission
	}
	return nil
}

// drop removes an unlinked inode whose blocks live in bucket uri (noBlocks
// in cache mode): a file or an empty directory at once, a non-empty
// directory by queueing it for Purge.
func drop(tx kv.Txn, n *kvschema.Inode, uri string) error {
	switch {
	case !n.IsDir():
		return dropFile(tx, n, uri)
	case n.Children == 0:
		return dropDir(tx, n, uri)
	default:
		n.Parent = 0
		putInode(tx, n)
		tx.Set(kvschema.PurgeKey(n.ID), []byte(uri))
	}
	return nil
}

// dropFile removes a file's inode, its inline content and lease, and queues
// its blocks for deletion from bucket uri (and, for a file still being
// written, a scan for blocks its writer uploaded but never committed).
func dropFile(tx kv.Txn, n *kvschema.Inode, uri string) error {
	tx.Delete(kvschema.InodeKey(n.ID))
	if n.XAttrs {
		if err := dropXAttrs(tx, n); err != nil {
			return err
		}
	}
	if uri == noBlocks {
		tx.Delete(kvschema.ObjectStateKey(n.ID))
	}
	if n.Inline {
		tx.Delete(kvschema.InlineKey(n.ID))
	}
	if n.Holder != "" {
		tx.Delete(kvschema.LeaseKey(n.Holder, n.ID))
		queueOrphanScan(tx, n.ID, uri)
		if err := dropTail(tx, n.ID, ^uint64(0)); err != nil {
			return err
		}
	}
	blocks, err := fileBlocks(tx, n)
	if err != nil {
		return err
	}
	for i, b := range blocks {
		tx.Delete(kvschema.BlockKey(n.ID, uint32(i)))
		tx.Set(kvschema.GarbageKey(n.ID, b.ID), kvschema.EncodeGarbage(kvschema.Garbage{StoreURI: uri, Block: b}))
	}
	return nil
}

// dropDir removes an empty directory's inode (and its attributes, and, in
// cache mode, its object state).
func dropDir(tx kv.Txn, n *kvschema.Inode, uri string) error {
	tx.Delete(kvschema.InodeKey(n.ID))
	if uri == noBlocks {
		tx.Delete(kvschema.ObjectStateKey(n.ID))
	}
	if n.XAttrs {
		return dropXAttrs(tx, n)
	}
	return nil
}

// queueOrphanScan asks the collector to delete file ino's objects that no
// committed block names: what a writer uploaded before it died. Cache mode
// has none: an unfinished object write leaves no object.
func queueOrphanScan(tx kv.Txn, ino uint64, uri string) {
	if uri == noBlocks {
		return
	}
	tx.Set(kvschema.GarbageKey(ino, 0), kvschema.EncodeGarbage(kvschema.Garbage{StoreURI: uri}))
}

// PurgePending reports whether detached subtrees await Purge.
func PurgePending(r kv.Reader) (bool, error) {
	start, end := kvschema.PurgeRange()
	pending := false
	err := r.Scan(start, end, func(_, _ []byte) bool { pending = true; return false })
	return pending, err
}

// Purge removes up to limit inodes of detached subtrees and reports how many
// it removed. Each call is one bounded command, so that deleting a huge
// subtree never stalls the service.
func Purge(tx kv.Txn, limit int) (int, error) {
	budget := limit
	for budget > 0 {
		root, uri, err := firstPurgeRoot(tx)
		if err != nil || root == 0 {
			return limit - budget, err
		}
		done, err := purgeTree(tx, root, uri, &budget)
		if err != nil {
			return limit - budget, err
		}
		if !done {
			break
		}
		n, err := getInode(tx, root)
		if err == nil {
			err = dropDir(tx, n, uri)
		}
		if err != nil {
			return limit - budget, err
		}
		tx.Delete(kvschema.PurgeKey(root))
		budget--
	}
	return limit - budget, nil
}

func firstPurgeRoot(r kv.Reader) (uint64, string, error) {
	start, end := kvschema.PurgeRange()
	var root uint64
	var uri string
	var derr error
	err := r.Scan(start, end, func(k, v []byte) bool {
		root, derr = kvschema.KeyID(k)
		uri = string(v)
		return false
	})
	if err != nil {
		return 0, "", err
	}
	return root, uri, derr
}

// purgeTree removes dir's descendants, depth first, within the budget, and
// reports whether dir is now empty.
func purgeTree(tx kv.Txn, dir uint64, uri string, budget *int) (bool, error) {
	for *budget > 0 {
		children, err := childInodes(tx, dir, min(*budget, 256))
		if err != nil || len(children) == 0 {
			return len(children) == 0, err
		}
		for _, n := range children {
			if n.IsDir() {
				done, err := purgeTree(tx, n.ID, uri, budget)
				if err != nil || !done {
					return false, err
				}
				if err := dropDir(tx, n, uri); err != nil {
					return false, err
				}
			} else if err := dropFile(tx, n, uri); err != nil {
				return false, err
			}
			tx.Delete(kvschema.DentryKey(dir, n.Name))
			*budget--
			if *budget == 0 {
				return false, nil
			}
		}
	}
	return false, nil
}

// childInodes returns up to limit children of dir, in name order.
func childInodes(r kv.Reader, dir uint64, limit int) ([]*kvschema.Inode, error) {
	start, end := kvschema.DentryRange(dir)
	var ids []uint64
	var derr error
	err := r.Scan(start, end, func(_, v []byte) bool {
		d, err := kvschema.DecodeDentry(v)
		if err != nil {
			derr = err
			return false
		}
		ids = append(ids, d.Child)
		return len(ids) < limit
	})
	if err != nil || derr != nil {
		return nil, errors.Join(err, derr)
	}
	out := make([]*kvschema.Inode, 0, len(ids))
	for _, id := range ids {
		n, err := getInode(r, id)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// fileBlocks returns a file's block records.
func fileBlocks(r kv.Reader, n *kvschema.Inode) ([]kvschema.Block, error) {
	if n.Blocks == 0 {
		return nil, nil
	}
	start, end := kvschema.BlockRange(n.ID)
	blocks := make([]kvschema.Block, 0, n.Blocks)
	var derr error
	err := r.Scan(start, end, func(_, v []byte) bool {
		b, err := kvschema.DecodeBlock(v)
		blocks, derr = append(blocks, b), err
		return err == nil
	})
	return blocks, errors.Join(err, derr)
}
