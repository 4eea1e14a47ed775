package bulkload_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/bulkload"
	"github.com/stratafs/strata/internal/fsimage"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
)

const realImage = "../fsimage/testdata/fsimage"

const base = 1000

func build(t *testing.T, src fsimage.Source, o bulkload.Options) (*bulkload.Result, *kv.Mem) {
	t.Helper()
	res, err := bulkload.Build(src, o)
	if err != nil {
		t.Fatal(err)
	}
	return res, load(t, o.Dir, res)
}

// load reads the build's tables into a Mem.
func load(t *testing.T, dir string, res *bulkload.Result) *kv.Mem {
	t.Helper()
	m := kv.NewMem()
	for _, tb := range res.Tables {
		err := pebblekv.VerifyTable(filepath.Join(dir, tb.Name), func(k, v []byte) error {
			if _, dup, _ := m.Get(k); dup {
				return fmt.Errorf("key %x in two tables", k)
			}
			m.Set(k, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func open(t *testing.T) *fsimage.Image {
	im, err := fsimage.Open(realImage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Close() })
	return im
}

// tree walks the built state from root: every path with its inode, and
// checks each directory's entry count and sums against its subtree.
func tree(t *testing.T, m *kv.Mem, root uint64) map[string]*kvschema.Inode {
	t.Helper()
	out := map[string]*kvschema.Inode{}
	var walk func(path string, ino uint64) (files, dirs, length uint64)
	walk = func(path string, ino uint64) (files, dirs, length uint64) {
		v, ok, _ := m.Get(kvschema.InodeKey(ino))
		if !ok {
			t.Fatalf("%s: no inode %d", path, ino)
		}
		n, err := kvschema.DecodeInode(v)
		if err != nil {
			t.Fatal(err)
		}
		out[path] = n
		if !n.IsDir() {
			return 1, 0, n.Length
		}
		start, end := kvschema.DentryRange(ino)
		var entries uint64
		m.Scan(start, end, func(k, v []byte) bool {
			name, _ := kvschema.DentryName(k)
			d, _ := kvschema.DecodeDentry(v)
			child := strings.TrimSuffix(path, "/") + "/" + name
			f, di, l := walk(child, d.Child)
			if c := out[child]; c.Parent != ino || c.Name != name || c.Type != d.Type {
				t.Errorf("%s: parent %d name %q type %d, the entry says %d %q %d", child, c.Parent, c.Name, c.Type, ino, name, d.Type)
			}
			files, dirs, length, entries = files+f, dirs+di, length+l, entries+1
			return true
		})
		if n.Children != entries || n.SubFiles != files || n.SubDirs != dirs || n.SubLength != length {
			t.Errorf("%s: children %d, sums %d %d %d; the subtree has %d, %d %d %d", path, n.Children,
				n.SubFiles, n.SubDirs, n.SubLength, entries, files, dirs, length)
		}
		return files, dirs + 1, length
	}
	walk("/", root)
	return out
}

// TestBuildRealImage builds the tables of a real HDFS image and finds in
// them the tree the image holds, with every attribute, the sums right, the
// link left out and the quota kept.
func TestBuildRealImage(t *testing.T) {
	dir := t.TempDir()
	res, m := build(t, open(t), bulkload.Options{Dir: dir, Key: "real", Base: base, DataMissing: true})
	got := tree(t, m, res.Root)
	want := imageTree(t, open(t))
	delete(want, "/links/to-readme")
	if len(got) != len(want) {
		t.Errorf("%d entries built, the image has %d", len(got), len(want))
	}
	for p, e := range want {
		n := got[p]
		if n == nil {
			t.Errorf("%s: not built", p)
			continue
		}
		if n.Perm != e.Perm || n.Owner != e.User || n.Group != e.Group || n.Mtime != e.Mtime || n.Atime != e.Atime ||
			n.IsDir() != e.IsDir() || !n.IsDir() && (n.Length != e.Length || n.Replication != e.Replication || n.BlockSize != e.BlockSize) {
			t.Errorf("%s: built %+v, the image has %+v", p, n, e)
		}
	}
	if res.Symlinks != 1 || res.Files+res.Dirs != uint64(len(got)) || res.SnapshotOnly != 0 {
		t.Errorf("result %+v", res)
	}
	// HDFS's space quota counts bytes times replication; Strata's, once.
	if q := got["/quota"].Quota; q == nil || *q != (kvschema.Quota{Names: 100_000, Space: 1 << 40 / bulkload.DefaultReplication}) {
		t.Errorf("/quota's quota: %+v", q)
	}
	if res.SpaceQuotas != 1 || res.Replication != bulkload.DefaultReplication {
		t.Errorf("result: %d space quotas at replication %d", res.SpaceQuotas, res.Replication)
	}
	lines, _ := os.ReadFile(res.UnreachableList)
	if n := strings.Count(string(lines), "\n"); uint64(n) != res.Unreachable || n < 2000 {
		t.Errorf("%d files listed as unreachable, the result says %d", n, res.Unreachable)
	}
}

// imageTree is what fsimage reads of the image, by path.
func imageTree(t *testing.T, src fsimage.Source) map[string]fsimage.Entry {
	byID := map[uint64]fsimage.Entry{}
	src.Entries(func(e *fsimage.Entry) error {
		c := *e
		c.Name = slices.Clone(e.Name)
		byID[e.ID] = c
		return nil
	})
	parent := map[uint64]uint64{}
	src.Children(func(p uint64, kids []uint64) error {
		for _, k := range kids {
			parent[k] = p
		}
		return nil
	})
	out := map[string]fsimage.Entry{}
	for id, e := range byID {
		var names []string
		for x := id; x != src.Root(); x = parent[x] {
			names = append([]string{string(byID[x].Name)}, names...)
		}
		out["/"+strings.Join(names, "/")] = e
	}
	return out
}

// TestBuildResumes stops a build in the middle of its tables (as a crash
// would: a table half written, not in the manifest) and runs it again: it
// ends with the tables of a build that never stopped.
func TestBuildResumes(t *testing.T) {
	whole := t.TempDir()
	want, _ := build(t, open(t), bulkload.Options{Dir: whole, Key: "k", Base: base, TableBytes: 16 << 10})
	if len(want.Tables) < 5 {
		t.Fatalf("only %d tables: the test wants a build of several", len(want.Tables))
	}
	for _, after := range []uint64{1, uint64(len(want.Tables)) / 2, uint64(len(want.Tables)) - 1} {
		dir := t.TempDir()
		stopped := func() (stopped bool) {
			defer func() { stopped = recover() != nil }()
			bulkload.Build(open(t), bulkload.Options{Dir: dir, Key: "k", Base: base, TableBytes: 16 << 10,
				Progress: func(p bulkload.Progress) {
					if p.Phase == "tables" && p.Done == after {
						panic("stop")
					}
				}})
			return false
		}()
		if !stopped {
			t.Fatalf("the build did not stop after %d tables", after)
		}
		// The next table, half written when the process died.
		next := want.Tables[after]
		os.WriteFile(filepath.Join(dir, next.Name), []byte("half a table"), 0o600)
		got, _ := build(t, open(t), bulkload.Options{Dir: dir, Key: "k", Base: base, TableBytes: 16 << 10})
		if fmt.Sprint(got.Tables) != fmt.Sprint(want.Tables) {
			t.Errorf("stopped after %d tables: resumed to\n%v\nwant\n%v", after, got.Tables, want.Tables)
		}
	}
	if _, err := bulkload.Build(open(t), bulkload.Options{Dir: whole, Key: "other", Base: base}); !errors.Is(err, bulkload.ErrOtherBuild) {
		t.Errorf("another build in the same directory: %v", err)
	}
}

// TestBuildFromText builds the same tree from the text hdfs oiv writes.
func TestBuildFromText(t *testing.T) {
	txt, err := fsimage.OpenDelimited("../fsimage/testdata/fsimage.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, m := build(t, txt, bulkload.Options{Dir: t.TempDir(), Key: "t", Base: base})
	got := tree(t, m, res.Root)
	_, mb := build(t, open(t), bulkload.Options{Dir: t.TempDir(), Key: "b", Base: base})
	resb, _ := bulkload.Build(open(t), bulkload.Options{Dir: t.TempDir(), Key: "b2", Base: base})
	want := tree(t, mb, resb.Root)
	if len(got) != len(want) {
		t.Fatalf("%d entries from the text, %d from the image", len(got), len(want))
	}
	for p, w := range want {
		g := got[p]
		if g == nil || g.Perm != w.Perm || g.Owner != w.Owner || g.Length != w.Length || g.SubFiles != w.SubFiles ||
			g.Mtime/60_000 != w.Mtime/60_000 {
			t.Errorf("%s: text %+v, image %+v", p, g, w)
		}
	}
}

// TestCheck passes the tables of a build, and refuses them for another
// import's ids.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	res, _ := build(t, open(t), bulkload.Options{Dir: dir, Key: "c", Base: base})
	for _, tb := range res.Tables {
		p := filepath.Join(dir, tb.Name)
		if n, err := bulkload.Check(p, base, 3146); err != nil || n != tb.Keys {
			t.Errorf("%s: %d keys, %v", tb.Name, n, err)
		}
		if _, err := bulkload.Check(p, base+1, 3146); !errors.Is(err, bulkload.ErrBadTable) {
			t.Errorf("%s checked for other ids: %v", tb.Name, err)
		}
	}
}
