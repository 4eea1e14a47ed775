package namespace

import (
	"errors"
	"slices"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Caller is who asks: the user and groups of the caller's token (or, with
// authentication off, what the client states, as HDFS "simple"
// authentication).
type Caller struct {
	User   string
	Groups []string
}

// Access bits, as in the rwx triplets of a mode.
const (
	accessRead  = 4
	accessWrite = 2
	accessExec  = 1
	stickyBit   = 0o1000
)

// IsSuperuser reports whether c is the superuser or in the supergroup.
func (fs *FS) IsSuperuser(c Caller) bool {
	return c.User == fs.cfg.Superuser || slices.Contains(c.Groups, fs.cfg.Supergroup)
}

// check reports whether c may access n with the wanted rwx bits: by its
// ACL if it has access entries (aclAllows), else by its mode bits.
func (fs *FS) check(c Caller, n *kvschema.Inode, want uint16) bool {
	if fs.IsSuperuser(c) {
		return true
	}
	if hasAccessACL(n) {
		return aclAllows(c, n, want)
	}
	var bits uint16
	switch {
	case n.Owner == c.User:
		bits = n.Perm >> 6
	case slices.Contains(c.Groups, n.Group):
		bits = n.Perm >> 3
	default:
		bits = n.Perm
	}
	return bits&want == want
}

// checkSticky enforces the sticky bit of dir on removing or renaming child.
func (fs *FS) checkSticky(c Caller, dir, child *kvschema.Inode) bool {
	return dir.Perm&stickyBit == 0 || fs.IsSuperuser(c) || c.User == dir.Owner || c.User == child.Owner
}

// checkSubtree reports whether c has the want bits on n and on every
// non-empty directory below it, as HDFS's subAccess check does (a
// recursive delete needs rwx on each, a content summary r-x): what c could
// not remove or read one entry at a time, it cannot have at once. It walks
// the directories of the subtree (not its files); a superuser skips it.
func (fs *FS) checkSubtree(r kv.Reader, c Caller, n *kvschema.Inode, want uint16) (bool, error) {
	if fs.IsSuperuser(c) {
		return true, nil
	}
	stack := []*kvschema.Inode{n}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if dir.Children == 0 {
			continue
		}
		if !fs.check(c, dir, want) {
			return false, nil
		}
		subdirs, err := childDirs(r, dir.ID)
		if err != nil {
			return false, err
		}
		stack = append(stack, subdirs...)
	}
	return true, nil
}

// childDirs returns the directories directly in dir.
func childDirs(r kv.Reader, dir uint64) ([]*kvschema.Inode, error) {
	start, end := kvschema.DentryRange(dir)
	var ids []uint64
	var derr error
	err := r.Scan(start, end, func(_, v []byte) bool {
		d, err := kvschema.DecodeDentry(v)
		if err != nil {
			derr = err
			return false
		}
		if d.Type == kvschema.TypeDir {
			ids = append(ids, d.Child)
		}
		return true
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
