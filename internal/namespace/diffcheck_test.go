package namespace_test

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

// opRead compares one read-only operation.
func (d *diff) opRead() {
	c, p := d.caller(), d.path(60)
	switch d.rng.IntN(4) {
	case 0:
		got, err := d.fs.Stat(d.batch, c, dflt, p)
		want, werr := d.m.stat(c, p)
		d.outcome(fmt.Sprintf("%s stat %s", c.User, p), err, werr,
			func() string { return compareNode(p, got, want, len(d.m.children(p))) })
	case 1:
		after, limit := pick(d, []string{"", "", "a", "b", "c", "bb"}), 1+d.rng.IntN(3)
		got, err := d.fs.List(d.batch, c, dflt, p, after, limit)
		names, more, werr := d.m.list(c, p, after, limit)
		d.outcome(fmt.Sprintf("%s list %s after=%q limit=%d", c.User, p, after, limit), err, werr, func() string {
			return d.compareListing(p, got, names, more)
		})
	case 2:
		gn, content, err := d.fs.Open(d.batch, c, dflt, p)
		want, werr := d.m.open(c, p)
		d.outcome(fmt.Sprintf("%s open %s", c.User, p), err, werr, func() string {
			if msg := compareNode(p, gn, want, -1); msg != "" {
				return msg
			}
			if !bytes.Equal(content.Inline, want.inline) || !slices.Equal(content.Blocks, want.blocks) {
				return fmt.Sprintf("content %q %v, model %q %v", content.Inline, content.Blocks, want.inline, want.blocks)
			}
			return ""
		})
	default:
		got, err := d.fs.ContentSummary(d.batch, c, dflt, p)
		want, werr := d.m.summary(c, p)
		d.outcome(fmt.Sprintf("%s contentSummary %s", c.User, p), err, werr,
			func() string { return diffValue("summary", got, want) })
	}
}

func (d *diff) compareListing(p string, got *namespace.Listing, names []string, more bool) string {
	if got.More != more || len(got.Entries) != len(names) {
		return fmt.Sprintf("listing %d entries more=%v, model %q more=%v", len(got.Entries), got.More, names, more)
	}
	if msg := compareNode(p, got.Self, d.m.nodes[p], len(d.m.children(p))); msg != "" {
		return "self: " + msg
	}
	for i, e := range got.Entries {
		q := join(p, names[i])
		if !d.m.nodes[p].dir {
			q = p
		}
		if msg := compareNode(q, e, d.m.nodes[q], -1); msg != "" {
			return msg
		}
	}
	return ""
}

var invalidPaths = []string{"", "a", "a/b", "///", "//a", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.",
	"/a\x00b", "/" + strings.Repeat("x", 256), "/a/" + strings.Repeat("y", 300) + "/b", "/a//"}

// opInvalid sends an operation with an invalid path, or to a namespace
// that does not exist; it must fail.
func (d *diff) opInvalid() {
	c, ns, p, q, want := d.caller(), dflt, pick(d, invalidPaths), d.path(50), error(namespace.ErrInvalidPath)
	if d.rng.IntN(3) == 0 {
		ns, p, want = "nope", d.path(50), namespace.ErrNoNamespace
	}
	op := d.rng.IntN(11)
	if op == 3 && want == namespace.ErrInvalidPath && d.rng.IntN(2) == 0 {
		// An invalid destination: the source is looked up first.
		p, q = q, p
		if _, err := d.m.existing(c, p); err != nil {
			want = err
		} else if p == "/" {
			want = namespace.ErrRoot
		}
	}
	var err error
	switch op {
	case 0:
		err = d.apply(func(tx kv.Txn) error {
			_, err := d.mut.Mkdirs(tx, d.now, c, ns, p, 0o777, 0, true)
			return err
		})
	case 1:
		err = d.apply(func(tx kv.Txn) error {
			_, err := d.mut.Create(tx, d.now, c, ns, p, namespace.CreateOptions{Holder: "h1", Parents: true, Overwrite: true})
			return err
		})
	case 2:
		err = d.apply(func(tx kv.Txn) error {
			_, err := d.mut.Delete(tx, d.now, c, ns, p, true)
			return err
		})
	case 3:
		err = d.apply(func(tx kv.Txn) error {
			_, err := d.mut.Rename(tx, d.now, c, ns, p, q, namespace.RenameOptions{})
			return err
		})
	case 4:
		err = d.apply(func(tx kv.Txn) error { return d.mut.SetPermission(tx, c, ns, p, 0o777) })
	case 5:
		err = d.apply(func(tx kv.Txn) error { return d.mut.SetTimes(tx, c, ns, p, 1, 1) })
	case 6:
		err = d.apply(func(tx kv.Txn) error {
			_, err := d.mut.RecoverLease(tx, d.now, c, ns, p, nil)
			return err
		})
	case 7:
		_, err = d.fs.Stat(d.batch, c, ns, p)
	case 8:
		_, err = d.fs.List(d.batch, c, ns, p, "", 10)
	case 9:
		_, _, err = d.fs.Open(d.batch, c, ns, p)
	default:
		_, err = d.fs.ContentSummary(d.batch, c, ns, p)
	}
	d.outcome(fmt.Sprintf("%s invalid op%d ns=%s %q %q", c.User, op, ns, p, q), err, want, nil)
}

// compareNode reports how inode n differs from the model's node at p;
// children < 0 skips the entry count.
func compareNode(p string, n *kvschema.Inode, mn *mnode, children int) string {
	if n == nil || mn == nil {
		return fmt.Sprintf("%s: namespace %+v, model %+v", p, n, mn)
	}
	name := baseOf(p)
	if p == "/" {
		name = ""
	}
	type attrs struct {
		Name         string
		Dir          bool
		Perm         uint16
		Owner, Group string
		Mtime, Atime int64
		Length       uint64
		Holder       string
		Inline       bool
		Blocks       uint32
		Children     int
		ID           uint64
		Repl         uint32
		BlockSize    uint64
	}
	got := attrs{n.Name, n.IsDir(), n.Perm, n.Owner, n.Group, n.Mtime, n.Atime, n.Length, n.Holder, n.Inline,
		n.Blocks, int(n.Children), n.ID, n.Replication, n.BlockSize}
	want := attrs{name, mn.dir, mn.perm, mn.owner, mn.group, mn.mtime, mn.atime, mn.length, mn.holder,
		mn.inline != nil, uint32(len(mn.blocks)), children, mn.ino, 0, 0}
	if children < 0 {
		want.Children = got.Children
	}
	if mn.dir {
		want.ID = got.ID
	} else {
		want.Repl, want.BlockSize = namespace.DefaultReplication, namespace.DefaultBlockSize
	}
	if got != want {
		return fmt.Sprintf("%s:\n  namespace %+v\n  model     %+v", p, got, want)
	}
	return ""
}

// compareAll compares the whole tree, every content summary, the leases
// and the block garbage queue with the model, and checks the keyspace.
func (d *diff) compareAll() {
	d.t.Helper()
	tree := map[string]*kvschema.Inode{}
	d.walk("/", tree)
	if got, want := slices.Sorted(maps.Keys(tree)), d.modelPaths(func(*mnode) bool { return true }); !slices.Equal(got, want) {
		d.fatalf("tree:\n  namespace %q\n  model     %q", got, want)
	}
	for p, n := range tree {
		if msg := compareNode(p, n, d.m.nodes[p], len(d.m.children(p))); msg != "" {
			d.fatalf("tree: %s", msg)
		}
		got, err := d.fs.ContentSummary(d.batch, super, dflt, p)
		want, _ := d.m.summary(super, p)
		if err != nil || got != want {
			d.fatalf("content summary of %s: %+v %v, model %+v", p, got, err, want)
		}
	}
	d.stats["max tree"] = max(d.stats["max tree"], len(tree))
	if s, err := d.fs.ContentSummary(d.batch, super, "other", "/a"); err != nil || s != (namespace.Summary{Dirs: 2}) {
		d.fatalf("namespace other changed: %+v %v", s, err)
	}
	d.compareLeases()
	d.compareGarbage()
	if err := checkInvariants(d.batch); err != nil {
		d.fatalf("invariants: %v", err)
	}
}

// walk lists dir page by page as the superuser and adds what it finds.
func (d *diff) walk(dir string, tree map[string]*kvschema.Inode) {
	st, err := d.fs.Stat(d.batch, super, dflt, dir)
	if err != nil {
		d.fatalf("stat %s: %v", dir, err)
	}
	tree[dir] = st
	after := ""
	for {
		l, err := d.fs.List(d.batch, super, dflt, dir, after, 1+d.rng.IntN(4))
		if err != nil {
			d.fatalf("list %s: %v", dir, err)
		}
		for _, e := range l.Entries {
			if e.Name <= after {
				d.fatalf("list %s: %q after %q", dir, e.Name, after)
			}
			after = e.Name
			if p := join(dir, e.Name); e.IsDir() {
				d.walk(p, tree)
			} else {
				tree[p] = e
			}
		}
		if !l.More {
			return
		}
	}
}

func (d *diff) compareLeases() {
	got := map[lease]bool{}
	if err := namespace.Leases(d.batch, func(h string, ino uint64) bool { got[lease{h, ino}] = true; return true }); err != nil {
		d.fatalf("leases: %v", err)
	}
	live, detached := d.m.leases()
	for l := range got {
		if !live[l] && !detached[l] {
			d.fatalf("unexpected lease %+v; model: live %v, detached %v", l, live, detached)
		}
	}
	for l := range live {
		if !got[l] {
			d.fatalf("lease %+v missing; have %v", l, got)
		}
	}
	if !d.purgePending() && len(detached) > 0 {
		d.fatalf("no purge pending, yet the model has detached leases %v", detached)
	}
}

func (d *diff) compareGarbage() {
	s, err := readRaw(d.batch)
	if err != nil {
		d.fatalf("keyspace: %v", err)
	}
	for id := range s.garbage {
		if !d.m.garbage[id] && !d.m.pendingGarbage[id] {
			d.fatalf("block %d in the garbage queue; model: %v pending %v", id, d.m.garbage, d.m.pendingGarbage)
		}
	}
	for id := range d.m.garbage {
		if _, ok := s.garbage[id]; !ok {
			d.fatalf("block %d missing from the garbage queue", id)
		}
	}
}
