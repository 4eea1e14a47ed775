package namespace_test

import (
	"maps"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

// model is a deliberately naive file system: a map from full path to node,
// no inodes, no aggregates, every answer recomputed by scanning the map. It
// is the oracle of the differential test. Operations run on a clone and the
// clone replaces the model only on success, as the server discards a failed
// command's overlay.
type model struct {
	super, supergroup string
	inlineLimit       int
	nodes             map[string]*mnode // "/" is the root

	// Left behind by recursive deletes until Purge finishes.
	detachedLeases map[lease]bool
	pendingGarbage map[uint64]bool
	garbage        map[uint64]bool // block ids queued for deletion
}

type mnode struct {
	dir          bool
	perm         uint16
	owner, group string
	mtime, atime int64
	// Files only.
	ino    uint64
	length uint64
	holder string
	inline []byte
	blocks []kvschema.Block
}

func newModel(cfg namespace.Config, now int64) *model {
	return &model{super: cfg.Superuser, supergroup: cfg.Supergroup, inlineLimit: cfg.InlineLimit,
		nodes: map[string]*mnode{"/": {dir: true, perm: 0o755, owner: cfg.Superuser,
			group: cfg.Supergroup, mtime: now, atime: now}},
		detachedLeases: map[lease]bool{}, pendingGarbage: map[uint64]bool{}, garbage: map[uint64]bool{}}
}

func (m *model) clone() *model {
	c := *m
	c.nodes = make(map[string]*mnode, len(m.nodes))
	for p, n := range m.nodes {
		cp := *n
		c.nodes[p] = &cp
	}
	c.detachedLeases = maps.Clone(m.detachedLeases)
	c.pendingGarbage = maps.Clone(m.pendingGarbage)
	c.garbage = maps.Clone(m.garbage)
	return &c
}

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

func baseOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// under reports whether p is q or lies below it.
func under(p, q string) bool {
	return p == q || q == "/" || strings.HasPrefix(p, q+"/")
}

// children returns the names in directory p, sorted.
func (m *model) children(p string) []string {
	var out []string
	for q := range m.nodes {
		if q != "/" && parentOf(q) == p {
			out = append(out, baseOf(q))
		}
	}
	slices.Sort(out)
	return out
}

// subtree returns p and every path below it.
func (m *model) subtree(p string) []string {
	var out []string
	for q := range m.nodes {
		if under(q, p) {
			out = append(out, q)
		}
	}
	return out
}

func (m *model) isSuper(c namespace.Caller) bool {
	return c.User == m.super || slices.Contains(c.Groups, m.supergroup)
}

func (m *model) can(c namespace.Caller, n *mnode, want uint16) bool {
	if m.isSuper(c) {
		return true
	}
	bits := n.perm & 7
	if c.User == n.owner {
		bits = n.perm >> 6 & 7
	} else if slices.Contains(c.Groups, n.group) {
		bits = n.perm >> 3 & 7
	}
	return bits&want == want
}

// canSubtree reports whether c has the want bits on every non-empty
// directory at or below p (HDFS's subAccess check).
func (m *model) canSubtree(c namespace.Caller, p string, want uint16) bool {
	for _, q := range m.subtree(p) {
		if n := m.nodes[q]; n.dir && len(m.children(q)) > 0 && !m.can(c, n, want) {
			return false
		}
	}
	return true
}

// sticky reports whether c may unlink child from dir as far as dir's sticky
// bit is concerned.
func (m *model) sticky(c namespace.Caller, dir, child *mnode) bool {
	return dir.perm&0o1000 == 0 || m.isSuper(c) || c.User == dir.owner || c.User == child.owner
}

// ancestors returns the directories above p, root first.
func ancestors(p string) []string {
	if p == "/" {
		return nil
	}
	out := []string{"/"}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// traverse checks every ancestor of p: it exists, is a directory and c may
// search it.
func (m *model) traverse(c namespace.Caller, p string) error {
	for _, a := range ancestors(p) {
		n := m.nodes[a]
		switch {
		case n == nil:
			return namespace.ErrNotFound
		case !n.dir:
			return namespace.ErrParentNotDir
		case !m.can(c, n, 1):
			return namespace.ErrPermission
		}
	}
	return nil
}

// existing is traverse for an operation on an existing path: anything
// missing on the way, including a file standing as a directory, is "not
// found".
func (m *model) existing(c namespace.Caller, p string) (*mnode, error) {
	err := m.traverse(c, p)
	if err == namespace.ErrParentNotDir || err == nil && m.nodes[p] == nil {
		err = namespace.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return m.nodes[p], nil
}

func (m *model) mkdirs(c namespace.Caller, now int64, p string, perm, umask uint16, parents bool) (bool, error) {
	return m.mkdirsMode(c, now, p, perm&^umask&0o7777, parents)
}

// mkdirsMode creates p with mode perm, its missing parents with perm|0300.
func (m *model) mkdirsMode(c namespace.Caller, now int64, p string, perm uint16, parents bool) (bool, error) {
	// The nearest existing ancestor-or-self of p decides.
	near := p
	for m.nodes[near] == nil {
		near = parentOf(near)
	}
	if err := m.traverse(c, near); err != nil {
		return false, err
	}
	n := m.nodes[near]
	if near == p {
		if n.dir {
			return false, nil
		}
		return false, namespace.ErrExists
	}
	switch {
	case !n.dir:
		return false, namespace.ErrParentNotDir
	case !m.can(c, n, 1):
		return false, namespace.ErrPermission
	case !parents && parentOf(p) != near:
		return false, namespace.ErrNotFound
	case !m.can(c, n, 3):
		return false, namespace.ErrPermission
	}
	n.mtime = now
	for _, a := range append(ancestors(p), p) {
		if m.nodes[a] != nil {
			continue
		}
		mode := perm
		if a != p {
			mode |= 0o300 // implied u+wx on created parents
		}
		m.nodes[a] = &mnode{dir: true, perm: mode, owner: c.User, group: m.nodes[parentOf(a)].group,
			mtime: now, atime: now}
	}
	return true, nil
}

func (m *model) create(c namespace.Caller, now int64, p string, o namespace.CreateOptions, ino uint64) (*mnode, error) {
	if len(o.Data) > 0 && (!o.Closed || len(o.Data) > m.inlineLimit) {
		return nil, namespace.ErrInvalidArgument
	}
	err := m.traverse(c, p)
	if err == namespace.ErrNotFound && o.Parents {
		if _, err = m.mkdirsMode(c, now, parentOf(p), 0o777&^o.Umask|0o300, true); err == nil {
			err = m.traverse(c, p)
		}
	}
	if err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, namespace.ErrIsDir
	}
	dir := m.nodes[parentOf(p)]
	if !m.can(c, dir, 3) {
		return nil, namespace.ErrPermission
	}
	if old := m.nodes[p]; old != nil {
		switch {
		case old.dir:
			return nil, namespace.ErrIsDir
		case old.holder != "": // HDFS: AlreadyBeingCreatedException
			return nil, namespace.ErrLeaseConflict
		case !o.Overwrite:
			return nil, namespace.ErrExists
		case !m.can(c, old, 2) || !m.sticky(c, dir, old):
			return nil, namespace.ErrPermission
		}
		m.remove(p, false)
	}
	n := &mnode{perm: o.Perm &^ o.Umask & 0o7777, owner: c.User, group: dir.group, mtime: now, atime: now,
		ino: ino, holder: o.Holder}
	if o.Closed {
		n.holder, n.length = "", uint64(len(o.Data))
		if len(o.Data) > 0 {
			n.inline = slices.Clone(o.Data)
		}
	}
	m.nodes[p] = n
	dir.mtime = now
	return n, nil
}

// remove drops p's subtree. A detached subtree (a non-empty directory)
// keeps its leases and blocks until Purge; anything else releases them now.
func (m *model) remove(p string, detach bool) {
	for _, q := range m.subtree(p) {
		n := m.nodes[q]
		delete(m.nodes, q)
		for _, b := range n.blocks {
			if detach {
				m.pendingGarbage[b.ID] = true
			} else {
				m.garbage[b.ID] = true
			}
		}
		if detach && n.holder != "" {
			m.detachedLeases[lease{n.holder, n.ino}] = true
		}
	}
}

// purged is called when Purge has nothing left to do.
func (m *model) purged() {
	clear(m.detachedLeases)
	for id := range m.pendingGarbage {
		m.garbage[id] = true
	}
	clear(m.pendingGarbage)
}

func (m *model) complete(c namespace.Caller, now int64, p string, o namespace.CompleteOptions) error {
	n, err := m.existing(c, p)
	switch {
	case err != nil:
		return err
	case n.dir:
		return namespace.ErrIsDir
	case n.holder == "" || n.holder != o.Holder || n.ino != o.Inode:
		return namespace.ErrNoLease
	case !m.validContent(o):
		return namespace.ErrInvalidArgument
	}
	n.length, n.mtime, n.holder = o.Length, now, ""
	if o.Inline && o.Length > 0 {
		n.inline = o.Data
	}
	n.blocks = o.Blocks
	return nil
}

func (m *model) validContent(o namespace.CompleteOptions) bool {
	if o.Inline {
		return len(o.Blocks) == 0 && len(o.Data) <= m.inlineLimit && uint64(len(o.Data)) == o.Length
	}
	var end uint64
	for _, b := range o.Blocks {
		if b.Offset != end || b.Length == 0 {
			return false
		}
		end += b.Length
	}
	return end == o.Length && len(o.Data) == 0
}

func (m *model) recoverLease(c namespace.Caller, p string) (bool, error) {
	n, err := m.existing(c, p)
	switch {
	case err != nil:
		return false, err
	case n.dir:
		return false, namespace.ErrIsDir
	case !m.can(c, n, 2):
		return false, namespace.ErrPermission
	}
	n.holder = ""
	return true, nil
}

func (m *model) expireLease(holder string, ino uint64) {
	delete(m.detachedLeases, lease{holder, ino})
	for _, n := range m.nodes {
		if !n.dir && n.ino == ino && n.holder == holder {
			n.holder = ""
		}
	}
}

func (m *model) delete(c namespace.Caller, now int64, p string, recursive bool) (bool, error) {
	err := m.traverse(c, p)
	if err == namespace.ErrNotFound || err == namespace.ErrParentNotDir || err == nil && m.nodes[p] == nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n := m.nodes[p]
	if p == "/" {
		return false, namespace.ErrRoot
	}
	dir := m.nodes[parentOf(p)]
	nonEmpty := n.dir && len(m.children(p)) > 0
	switch {
	case nonEmpty && !recursive:
		return false, namespace.ErrNotEmpty
	case !m.can(c, dir, 3) || !m.sticky(c, dir, n) || nonEmpty && !m.canSubtree(c, p, 7):
		return false, namespace.ErrPermission
	}
	m.remove(p, nonEmpty)
	dir.mtime = now
	return true, nil
}
