package namespace

import (
	"slices"

	"github.com/stratafs/strata/internal/kvschema"
)

// Caller is who asks, as the client states it (HDFS "simple" authentication).
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

// check reports whether c may access n with the wanted rwx bits.
func (fs *FS) check(c Caller, n *kvschema.Inode, want uint16) bool {
	if fs.IsSuperuser(c) {
		return true
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
