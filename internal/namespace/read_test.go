package namespace_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func TestListPaging(t *testing.T) {
	e := newEnv(t)
	names := []string{"B", "a", "a.b", "b", "c", "d", "dd", "e"} // bytewise order
	for _, n := range names {
		if n == "c" {
			e.mkdir("/d/" + n)
		} else {
			e.write(super, "/d/"+n, n)
		}
	}
	for _, tc := range []struct {
		startAfter string
		limit      int
		want       []string
		more       bool
	}{
		{"", 3, []string{"B", "a", "a.b"}, true},
		{"a.b", 3, []string{"b", "c", "d"}, true},
		{"d", 3, []string{"dd", "e"}, false},
		{"d", 2, []string{"dd", "e"}, false},
		{"", 8, names, false},
		{"", 100, names, false},
		{"", 7, names[:7], true},
		{"a0", 2, []string{"b", "c"}, true}, // not a name in the directory
		{"e", 5, nil, false},
		{"zzz", 5, nil, false},
	} {
		l, err := e.fs.List(e.tx, super, dflt, "/d", tc.startAfter, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range l.Entries {
			got = append(got, n.Name)
		}
		if !slices.Equal(got, tc.want) || l.More != tc.more || l.Self.Name != "d" {
			t.Errorf("after %q limit %d: %q more=%v, want %q more=%v", tc.startAfter, tc.limit, got, l.More, tc.want, tc.more)
		}
	}
	// Entries carry their attributes.
	l, _ := e.fs.List(e.tx, super, dflt, "/d", "b", 2)
	if !l.Entries[0].IsDir() || l.Entries[1].IsDir() || l.Entries[1].Length != 1 {
		t.Errorf("entries %+v %+v", l.Entries[0], l.Entries[1])
	}
	// A file lists as itself, whatever the page.
	for _, after := range []string{"", "zzz"} {
		l, err := e.fs.List(e.tx, super, dflt, "/d/a", after, 1)
		if err != nil || len(l.Entries) != 1 || l.Entries[0].Name != "a" || l.More || l.Self.Name != "a" {
			t.Errorf("listing a file: %+v %v", l, err)
		}
	}
	_, err := e.fs.List(e.tx, super, dflt, "/d/nope", "", 1)
	wantErr(t, err, namespace.ErrNotFound)
	_, err = e.fs.List(e.tx, super, dflt, "/d/a/x", "", 1)
	wantErr(t, err, namespace.ErrNotFound)
	// An empty directory and the root.
	if l, err := e.fs.List(e.tx, super, dflt, "/d/c", "", 10); err != nil || len(l.Entries) != 0 || l.More {
		t.Errorf("empty directory: %+v %v", l, err)
	}
	if l, err := e.fs.List(e.tx, super, dflt, "/", "", 10); err != nil || len(l.Entries) != 1 || l.Self.Name != "" {
		t.Errorf("root: %+v %v", l, err)
	}
}

// The content summary of every directory equals a recount after each kind
// of mutation.
func TestContentSummaryAfterMutations(t *testing.T) {
	e := newEnv(t)
	var fid uint64
	steps := []struct {
		name string
		do   func() error
		want map[string]namespace.Summary
	}{
		{"mkdirs", func() error { _, err := e.mkdirs(super, "/x/y", 0o755, 0, true); return err },
			map[string]namespace.Summary{"/": {Dirs: 3}, "/x": {Dirs: 2}, "/x/y": {Dirs: 1}}},
		{"create", func() error {
			n, err := e.create(super, "/x/y/f", namespace.CreateOptions{Holder: "h"})
			if n != nil {
				fid = n.ID
			}
			return err
		}, map[string]namespace.Summary{"/": {Files: 1, Dirs: 3}, "/x/y": {Files: 1, Dirs: 1}}},
		{"complete", func() error {
			return e.complete(super, "/x/y/f", namespace.CompleteOptions{Inode: fid, Holder: "h", Length: 100,
				Blocks: []kvschema.Block{{ID: 1, Length: 100}}})
		}, map[string]namespace.Summary{"/": {Length: 100, Files: 1, Dirs: 3}, "/x/y": {Length: 100, Files: 1, Dirs: 1}}},
		{"create parents", func() error {
			_, err := e.create(super, "/z/w/g", namespace.CreateOptions{Holder: "h", Parents: true})
			return err
		}, map[string]namespace.Summary{"/": {Length: 100, Files: 2, Dirs: 5}, "/z": {Files: 1, Dirs: 2}}},
		{"rename across", func() error { _, err := e.rename(super, "/x/y", "/z/w", namespace.RenameOptions{}); return err },
			map[string]namespace.Summary{"/": {Length: 100, Files: 2, Dirs: 5}, "/x": {Dirs: 1},
				"/z": {Length: 100, Files: 2, Dirs: 3}, "/z/w": {Length: 100, Files: 2, Dirs: 2}}},
		{"overwrite", func() error {
			_, err := e.create(super, "/z/w/y/f", namespace.CreateOptions{Holder: "h", Overwrite: true})
			return err
		}, map[string]namespace.Summary{"/": {Files: 2, Dirs: 5}, "/z/w/y": {Files: 1, Dirs: 1}}},
		{"recover lease", func() error { _, err := e.recoverLease(super, "/z/w/y/f"); return err },
			map[string]namespace.Summary{"/": {Files: 2, Dirs: 5}}},
		{"rename over", func() error {
			_, err := e.rename(super, "/z/w/g", "/z/w/y/f", namespace.RenameOptions{Overwrite: true, NoDescend: true})
			return err
		}, map[string]namespace.Summary{"/": {Files: 1, Dirs: 5}, "/z/w": {Files: 1, Dirs: 2}}},
		{"delete file", func() error { _, err := e.delete(super, "/z/w/y/f", false); return err },
			map[string]namespace.Summary{"/": {Dirs: 5}, "/z/w/y": {Dirs: 1}}},
		{"delete recursive", func() error { _, err := e.delete(super, "/z", true); return err },
			map[string]namespace.Summary{"/": {Dirs: 2}, "/x": {Dirs: 1}}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for p, want := range s.want {
			if got := e.summary(p); got != want {
				t.Errorf("after %s: %s: %+v, want %+v", s.name, p, got, want)
			}
		}
		e.check()
	}
	e.write(super, "/x/file", "12345")
	if got := e.summary("/x/file"); got != (namespace.Summary{Length: 5, Files: 1}) {
		t.Errorf("summary of a file: %+v", got)
	}
}

var badPaths = []string{
	"", "relative", "a/b", "./a", "//a", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.", "/a/..", "/a//",
	"/a\x00b", "/" + strings.Repeat("n", namespace.MaxNameLen+1),
	"/" + strings.Repeat("d/", namespace.MaxDepth+1),
	"/" + strings.Repeat("abcdefgh/", 888) + "abcdefghi", // 8002 bytes
}

// pathOps runs each operation on a path in namespace ns.
func pathOps(e *env) map[string]func(tx kv.Txn, ns, p string) error {
	return map[string]func(tx kv.Txn, ns, p string) error{
		"mkdirs": func(tx kv.Txn, ns, p string) error {
			_, err := e.fs.Mkdirs(tx, 1, super, ns, p, 0o777, 0, true)
			return err
		},
		"create": func(tx kv.Txn, ns, p string) error {
			_, err := e.fs.Create(tx, 1, super, ns, p, namespace.CreateOptions{Holder: "h", Parents: true, Overwrite: true})
			return err
		},
		"complete": func(tx kv.Txn, ns, p string) error {
			return e.fs.Complete(tx, 1, super, ns, p, namespace.CompleteOptions{})
		},
		"delete": func(tx kv.Txn, ns, p string) error { _, err := e.fs.Delete(tx, 1, super, ns, p, true); return err },
		"rename src": func(tx kv.Txn, ns, p string) error {
			_, err := e.fs.Rename(tx, 1, super, ns, p, "/b/x", namespace.RenameOptions{})
			return err
		},
		"rename dst": func(tx kv.Txn, ns, p string) error {
			_, err := e.fs.Rename(tx, 1, super, ns, "/a/f", p, namespace.RenameOptions{})
			return err
		},
		"setPermission": func(tx kv.Txn, ns, p string) error { return e.fs.SetPermission(tx, super, ns, p, 0o777) },
		"setOwner":      func(tx kv.Txn, ns, p string) error { return e.fs.SetOwner(tx, super, ns, p, "x", "y") },
		"setTimes":      func(tx kv.Txn, ns, p string) error { return e.fs.SetTimes(tx, super, ns, p, 1, 1) },
		"recoverLease": func(tx kv.Txn, ns, p string) error {
			_, err := e.fs.RecoverLease(tx, 1, super, ns, p, nil)
			return err
		},
		"stat":    func(tx kv.Txn, ns, p string) error { _, err := e.fs.Stat(tx, super, ns, p); return err },
		"list":    func(tx kv.Txn, ns, p string) error { _, err := e.fs.List(tx, super, ns, p, "", 10); return err },
		"open":    func(tx kv.Txn, ns, p string) error { _, _, err := e.fs.Open(tx, super, ns, p); return err },
		"summary": func(tx kv.Txn, ns, p string) error { _, err := e.fs.ContentSummary(tx, super, ns, p); return err },
	}
}

// Every operation rejects an invalid path before writing anything.
func TestInvalidPaths(t *testing.T) {
	e := newEnv(t)
	e.tree("/a/f", "/b/")
	for name, op := range pathOps(e) {
		for _, p := range badPaths {
			ov := kv.NewOverlay(e.tx)
			err := op(ov, dflt, p)
			if !errors.Is(err, namespace.ErrInvalidPath) || ov.Len() != 0 {
				t.Errorf("%s %.20q: %v after writing %d keys, want %v and no writes", name, p, err, ov.Len(), namespace.ErrInvalidPath)
			}
		}
	}
	e.check()
}

func TestUnknownNamespace(t *testing.T) {
	e := newEnv(t)
	e.tree("/a/f", "/b/")
	for name, op := range pathOps(e) {
		ov := kv.NewOverlay(e.tx)
		if err := op(ov, "nope", "/a/f"); !errors.Is(err, namespace.ErrNoNamespace) || ov.Len() != 0 {
			t.Errorf("%s: %v after writing %d keys, want %v and no writes", name, err, ov.Len(), namespace.ErrNoNamespace)
		}
	}
	// The empty name is the default namespace.
	if _, err := e.fs.Stat(e.tx, super, "", "/a/f"); err != nil {
		t.Errorf("stat in namespace \"\": %v", err)
	}
}
