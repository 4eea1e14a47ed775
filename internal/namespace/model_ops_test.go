package namespace_test

import (
	"slices"

	"github.com/stratafs/strata/internal/namespace"
)

// rename follows the HDFS rules as RenameOptions describes them: without
// NoDescend an existing destination directory receives src as a child.
func (m *model) rename(c namespace.Caller, now int64, src, dst string, o namespace.RenameOptions) (string, error) {
	if _, err := m.existing(c, src); err != nil {
		return "", err
	}
	if src == "/" {
		return "", namespace.ErrRoot
	}
	if err := m.traverse(c, dst); err != nil {
		return "", err
	}
	final := dst
	if t := m.nodes[dst]; t != nil && t.dir && !o.NoDescend && dst != src {
		if !m.can(c, t, 1) {
			return "", namespace.ErrPermission
		}
		final = join(dst, baseOf(src))
	}
	if final == src {
		if o.NoDescend {
			return "", namespace.ErrExists
		}
		return src, nil
	}
	if err := m.checkRename(c, src, final, o); err != nil {
		return "", err
	}
	if m.nodes[final] != nil {
		m.remove(final, false)
	}
	for _, q := range m.subtree(src) {
		n := m.nodes[q]
		delete(m.nodes, q)
		m.nodes[final+q[len(src):]] = n
	}
	m.nodes[parentOf(src)].mtime = now
	m.nodes[parentOf(final)].mtime = now
	return final, nil
}

func (m *model) checkRename(c namespace.Caller, src, final string, o namespace.RenameOptions) error {
	if final == "/" {
		return namespace.ErrExists
	}
	sn, sdir, dir, target := m.nodes[src], m.nodes[parentOf(src)], m.nodes[parentOf(final)], m.nodes[final]
	switch {
	case under(parentOf(final), src):
		return namespace.ErrRenameLoop
	case !m.can(c, sdir, 3) || !m.sticky(c, sdir, sn) || !m.can(c, dir, 3):
		return namespace.ErrPermission
	case target == nil:
		return nil
	case !o.Overwrite:
		return namespace.ErrExists
	case target.dir && !sn.dir:
		return namespace.ErrIsDir
	case !target.dir && sn.dir:
		return namespace.ErrNotDir
	case target.dir && len(m.children(final)) > 0:
		return namespace.ErrNotEmpty
	case target.holder != "":
		return namespace.ErrLeaseConflict
	case !m.sticky(c, dir, target):
		return namespace.ErrPermission
	}
	return nil
}

func (m *model) setPermission(c namespace.Caller, p string, perm uint16) error {
	n, err := m.existing(c, p)
	if err == nil && c.User != n.owner && !m.isSuper(c) {
		err = namespace.ErrPermission
	}
	if err == nil {
		n.perm = perm & 0o7777
	}
	return err
}

// setOwner: HDFS lets only the owner (or a superuser) call it; only a
// superuser gives a file away, and an owner may only pick a group of its
// own.
func (m *model) setOwner(c namespace.Caller, p, owner, group string) error {
	n, err := m.existing(c, p)
	if err != nil {
		return err
	}
	if !m.isSuper(c) {
		if c.User != n.owner || owner != "" && owner != n.owner ||
			group != "" && group != n.group && !slices.Contains(c.Groups, group) {
			return namespace.ErrPermission
		}
	}
	if owner != "" {
		n.owner = owner
	}
	if group != "" {
		n.group = group
	}
	return nil
}

func (m *model) setTimes(c namespace.Caller, p string, mtime, atime int64) error {
	n, err := m.existing(c, p)
	if err == nil && !m.can(c, n, 2) && c.User != n.owner {
		err = namespace.ErrPermission
	}
	if err != nil {
		return err
	}
	if mtime != -1 {
		n.mtime = mtime
	}
	if atime != -1 {
		n.atime = atime
	}
	return nil
}

func (m *model) stat(c namespace.Caller, p string) (*mnode, error) { return m.existing(c, p) }

func (m *model) open(c namespace.Caller, p string) (*mnode, error) {
	n, err := m.existing(c, p)
	switch {
	case err != nil:
		return nil, err
	case n.dir:
		return nil, namespace.ErrIsDir
	case !m.can(c, n, 4):
		return nil, namespace.ErrPermission
	}
	return n, nil
}

// list returns the names of a page, or p's own name for a file.
func (m *model) list(c namespace.Caller, p, startAfter string, limit int) (names []string, more bool, err error) {
	n, err := m.existing(c, p)
	switch {
	case err != nil:
		return nil, false, err
	case !n.dir:
		return []string{baseOf(p)}, false, nil
	case !m.can(c, n, 5):
		return nil, false, namespace.ErrPermission
	}
	for _, name := range m.children(p) {
		if name <= startAfter {
			continue
		}
		if len(names) == limit {
			return names, true, nil
		}
		names = append(names, name)
	}
	return names, false, nil
}

func (m *model) summary(c namespace.Caller, p string) (namespace.Summary, error) {
	n, err := m.existing(c, p)
	if err == nil && n.dir && (!m.can(c, n, 5) || !m.canSubtree(c, p, 5)) {
		err = namespace.ErrPermission // as HDFS: on it and every non-empty directory below
	}
	if err != nil {
		return namespace.Summary{}, err
	}
	var s namespace.Summary
	for _, q := range m.subtree(p) {
		if n := m.nodes[q]; n.dir {
			s.Dirs++
		} else {
			s.Files++
			s.Length += n.length
		}
	}
	return s, nil
}

// leases returns the leases the store must hold: open files in the tree
// and, while a purge is pending, possibly those of detached subtrees.
func (m *model) leases() (live, detached map[lease]bool) {
	live = map[lease]bool{}
	for _, n := range m.nodes {
		if !n.dir && n.holder != "" {
			live[lease{n.holder, n.ino}] = true
		}
	}
	return live, m.detachedLeases
}
