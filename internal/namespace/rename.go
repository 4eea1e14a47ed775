package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// RenameOptions select between the two HDFS rename flavours.
type RenameOptions struct {
	// Overwrite replaces an existing destination file or empty directory
	// of the same type (HDFS rename2 with OVERWRITE).
	Overwrite bool
	// NoDescend never moves src into an existing destination directory
	// (rename2); without it an existing directory dst receives src as a
	// child (FileSystem.rename).
	NoDescend bool
}

// Rename moves src to dst atomically in O(depth), whatever the size of the
// subtree, and returns the path src now has.
func (fs *FS) Rename(tx kv.Txn, now int64, c Caller, ns, src, dst string, o RenameOptions) (string, error) {
	final, err := fs.rename(tx, now, c, ns, src, dst, o)
	if err != nil {
		return "", pathErr("rename", src+" to "+dst, err)
	}
	return final, nil
}

func (fs *FS) rename(tx kv.Txn, now int64, c Caller, ns, src, dst string, o RenameOptions) (string, error) {
	sres, err := fs.resolveExisting(tx, c, ns, src)
	if err != nil {
		return "", err
	}
	if sres.parent == nil {
		return "", ErrRoot
	}
	dres, err := fs.resolve(tx, c, ns, dst)
	if err != nil {
		return "", err
	}
	sn := sres.node
	dir, target, parts, dstDirs := dres.parent, dres.node, dres.parts, dres.dirs
	if target != nil && target.IsDir() && !o.NoDescend && target.ID != sn.ID {
		if !fs.check(c, target, accessExec) {
			return "", ErrPermission
		}
		dir, parts, dstDirs = target, append(parts, sn.Name), append(dstDirs[:len(dstDirs):len(dstDirs)], target)
		if target, err = lookup(tx, dir.ID, sn.Name); err != nil {
			return "", err
		}
	}
	if target != nil && target.ID == sn.ID {
		if o.NoDescend {
			return "", ErrExists
		}
		return JoinPath(sres.parts), nil
	}
	if err := fs.checkRename(tx, c, sres.parent, sn, dir, target, o); err != nil {
		return "", err
	}
	if target != nil {
		if err := unlink(tx, now, target); err != nil {
			return "", err
		}
		if err := drop(tx, target, blockStore(dres.ns)); err != nil {
			return "", err
		}
	}
	if err := unlink(tx, now, sn); err != nil {
		return "", err
	}
	sn.Name = parts[len(parts)-1]
	return JoinPath(parts), linkBelow(tx, now, dir.ID, sn, deepestCommon(sres.dirs, dstDirs))
}

// deepestCommon returns the deepest directory two paths' directories (root
// first) share: what a rename between them leaves as it was.
func deepestCommon(a, b []*kvschema.Inode) uint64 {
	var common uint64
	for i := 0; i < len(a) && i < len(b) && a[i].ID == b[i].ID; i++ {
		common = a[i].ID
	}
	return common
}

// checkRename validates moving sn from sdir into dir, replacing target (nil
// if there is none).
func (fs *FS) checkRename(r kv.Reader, c Caller, sdir, sn, dir, target *kvschema.Inode, o RenameOptions) error {
	if dir == nil {
		return ErrExists // dst is the root
	}
	if !dir.IsDir() {
		return ErrParentNotDir
	}
	if inside, err := isWithin(r, dir.ID, sn.ID); err != nil || inside {
		return orErr(err, ErrRenameLoop)
	}
	if !fs.check(c, sdir, accessWrite|accessExec) || !fs.checkSticky(c, sdir, sn) ||
		!fs.check(c, dir, accessWrite|accessExec) {
		return ErrPermission
	}
	if target == nil {
		return nil
	}
	switch {
	case !o.Overwrite:
		return ErrExists
	case target.IsDir() && !sn.IsDir():
		return ErrIsDir
	case !target.IsDir() && sn.IsDir():
		return ErrNotDir
	case target.IsDir() && target.Children > 0:
		return ErrNotEmpty
	case target.Holder != "":
		return ErrLeaseConflict
	case !fs.checkSticky(c, dir, target):
		return ErrPermission
	}
	return nil
}

// isWithin reports whether inode id is anc or lies below it.
func isWithin(r kv.Reader, id, anc uint64) (bool, error) {
	for id != 0 {
		if id == anc {
			return true, nil
		}
		n, err := getInode(r, id)
		if err != nil {
			return false, err
		}
		id = n.Parent
	}
	return false, nil
}

func orErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
