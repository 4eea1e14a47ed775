package fusefs

import (
	"github.com/stratafs/strata/internal/client"
	"path"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rootID is the kernel's id of the mount's root.
const rootID = fuse.FUSE_ROOT_ID

// node is what a kernel node id stands for: an entry, named by its parent
// and its name. The service's inode id is only an attribute (st_ino): a
// file rewritten at close (stage.go) is a new inode under the same node.
type node struct {
	id      uint64
	parent  uint64 // 0: the root, or an entry unlinked (or replaced) since
	name    string
	lookups uint64 // the kernel's references; the node goes at zero
	// seen is the file's version when last opened here: a reader opened
	// on the same version keeps the kernel's cached pages.
	seen version
	// group is a directory's group, as last stated: a file created in
	// it takes it.
	group string
	// st is the status the kernel was last told, at stAt (nil: none, or
	// the file changed since).
	st   *client.FileStatus
	stAt time.Time
}

// version is what tells that a file's content may have changed.
type version struct {
	ino, size uint64
	mtime     int64
}

func versionOf(st *client.FileStatus) version {
	return version{ino: st.InodeID, size: st.Length, mtime: st.ModTime.UnixNano()}
}

// key names an entry: its parent's node and its name.
type key struct {
	parent uint64
	name   string
}

// nodeTable maps the kernel's node ids to entries and back. Safe for
// concurrent use. Every change that a successor must know (a node made, an
// entry moved, a node forgotten) goes to the journal, if any, before the
// kernel hears of it.
type nodeTable struct {
	mu struct {
		sync.Mutex
		byID   map[uint64]*node
		byName map[key]*node
		next   uint64
	}
	journal *journal // nil: not kept
}

func newNodeTable(j *journal) *nodeTable {
	t := &nodeTable{journal: j}
	t.mu.byID = map[uint64]*node{rootID: {id: rootID, lookups: 1}}
	t.mu.byName = map[key]*node{}
	t.mu.next = rootID + 1
	return t
}

// path returns the node's path in the namespace, and false when the node
// is unknown or no longer names an entry.
func (t *nodeTable) path(id uint64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pathLocked(id)
}

func (t *nodeTable) pathLocked(id uint64) (string, bool) {
	var parts []string
	for id != rootID {
		n := t.mu.byID[id]
		if n == nil || n.parent == 0 {
			return "", false
		}
		parts = append(parts, n.name)
		id = n.parent
	}
	p := "/"
	for i := len(parts) - 1; i >= 0; i-- {
		p = path.Join(p, parts[i])
	}
	return p, true
}

// lookup returns the node of name in parent, made if new, with one more
// reference from the kernel.
func (t *nodeTable) lookup(parent uint64, name string) *node {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key{parent, name}
	n := t.mu.byName[k]
	if n == nil {
		n = &node{id: t.mu.next, parent: parent, name: name}
		t.mu.next++
		t.mu.byID[n.id] = n
		t.mu.byName[k] = n
		t.journal.put(n.id, parent, name)
		t.compactLocked()
	}
	n.lookups++
	return n
}

// peek returns the node of name in parent, if the kernel holds one (0
// if not), without a reference.
func (t *nodeTable) peek(parent uint64, name string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.mu.byName[key{parent, name}]; n != nil {
		return n.id
	}
	return 0
}

// setStatus records the status the kernel is told of node id.
func (t *nodeTable) setStatus(id uint64, st *client.FileStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.mu.byID[id]; n != nil {
		n.st, n.stAt = st, time.Now()
		if st.IsDir {
			n.group = st.Group
		}
	}
}

// status returns a copy of the status the kernel was told of node id, if
// that was within d (the kernel trusts it that long), else nil.
func (t *nodeTable) status(id uint64, d time.Duration) *client.FileStatus {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.mu.byID[id]
	if n == nil || n.st == nil || time.Since(n.stAt) >= d {
		return nil
	}
	st := *n.st
	return &st
}

// changed forgets node id's status: the file changed under the kernel.
func (t *nodeTable) changed(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.mu.byID[id]; n != nil {
		n.st = nil
	}
}

// group returns directory id's group as last stated, or "".
func (t *nodeTable) group(id uint64) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.mu.byID[id]; n != nil {
		return n.group
	}
	return ""
}

// forget drops n references of the kernel's to node id.
func (t *nodeTable) forget(id, n uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	nd := t.mu.byID[id]
	if nd == nil || id == rootID {
		return
	}
	nd.lookups -= min(n, nd.lookups)
	if nd.lookups > 0 {
		return
	}
	delete(t.mu.byID, id)
	if t.mu.byName[key{nd.parent, nd.name}] == nd {
		delete(t.mu.byName, key{nd.parent, nd.name})
	}
	t.journal.drop(id)
}

// unlink marks the entry name of parent gone: its node stays for the
// kernel's references (open files), naming nothing.
func (t *nodeTable) unlink(parent uint64, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unlinkLocked(parent, name)
}

func (t *nodeTable) unlinkLocked(parent uint64, name string) {
	k := key{parent, name}
	if n := t.mu.byName[k]; n != nil {
		delete(t.mu.byName, k)
		n.parent = 0
		t.journal.put(n.id, 0, "")
	}
}

// rename moves the entry (parent, name) to (newParent, newName), replacing
// whatever was there.
func (t *nodeTable) rename(parent uint64, name string, newParent uint64, newName string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.mu.byName[key{parent, name}]
	t.unlinkLocked(newParent, newName)
	if n == nil {
		return
	}
	delete(t.mu.byName, key{parent, name})
	n.parent, n.name = newParent, newName
	t.mu.byName[key{newParent, newName}] = n
	t.journal.put(n.id, newParent, newName)
}

// opened records the version a file had when opened, and reports
// whether it is the version last opened here: the kernel's cached pages
// of the file hold.
func (t *nodeTable) opened(id uint64, v version) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.mu.byID[id]
	if n == nil {
		return false
	}
	same := n.seen == v
	n.seen = v
	return same
}

// restore puts the nodes a predecessor left in the journal back. Their
// references are unknown (the kernel holds them): each is kept until the
// kernel forgets it, however many it forgets.
func (t *nodeTable) restore(entries map[uint64]key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, k := range entries {
		n := &node{id: id, parent: k.parent, name: k.name, lookups: 1 << 62}
		t.mu.byID[id] = n
		if k.parent != 0 {
			t.mu.byName[k] = n
		}
		t.mu.next = max(t.mu.next, id+1)
	}
}

// len returns how many nodes the table holds.
func (t *nodeTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.byID)
}

// compactLocked rewrites the journal with the nodes the table holds, once
// it holds far more records than nodes.
func (t *nodeTable) compactLocked() {
	if t.journal.due(len(t.mu.byID)) {
		t.journal.rewrite(t.snapshotLocked())
	}
}

// snapshotLocked returns every node but the root, for a compacted journal.
func (t *nodeTable) snapshotLocked() map[uint64]key {
	out := make(map[uint64]key, len(t.mu.byID))
	for id, n := range t.mu.byID {
		if id != rootID {
			out[id] = key{n.parent, n.name}
		}
	}
	return out
}
