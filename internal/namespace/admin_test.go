package namespace_test

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func (e *env) createNamespace(c namespace.Caller, info kvschema.Namespace) error {
	return e.apply(func(tx kv.Txn, now int64) error { return e.fs.CreateNamespace(tx, now, c, info) })
}

func TestCreateNamespace(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    namespace.Caller
		info kvschema.Namespace
		err  error
	}{
		{"new", super, kvschema.Namespace{Name: "warehouse", Mode: 1, StoreURI: "s3://b/p"}, nil},
		{"superuser by group", carol, kvschema.Namespace{Name: "lake-2_x", Mode: 2}, nil},
		{"not a superuser", alice, kvschema.Namespace{Name: "mine", Mode: 1}, namespace.ErrPermission},
		{"exists", super, kvschema.Namespace{Name: dflt, Mode: 1}, namespace.ErrExists},
		{"no mode", super, kvschema.Namespace{Name: "m", Mode: 0}, namespace.ErrInvalidArgument},
		{"empty name", super, kvschema.Namespace{Name: "", Mode: 1}, namespace.ErrInvalidArgument},
		{"upper case", super, kvschema.Namespace{Name: "Data", Mode: 1}, namespace.ErrInvalidArgument},
		{"leading dash", super, kvschema.Namespace{Name: "-x", Mode: 1}, namespace.ErrInvalidArgument},
		{"dot", super, kvschema.Namespace{Name: "a.b", Mode: 1}, namespace.ErrInvalidArgument},
		{"slash", super, kvschema.Namespace{Name: "a/b", Mode: 1}, namespace.ErrInvalidArgument},
		{"too long", super, kvschema.Namespace{Name: strings.Repeat("n", 64), Mode: 1}, namespace.ErrInvalidArgument},
		{"longest", super, kvschema.Namespace{Name: strings.Repeat("n", 63), Mode: 1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			err := e.createNamespace(tc.c, tc.info)
			wantErr(t, err, tc.err)
			e.check()
			if err != nil {
				return
			}
			all, err := namespace.Namespaces(e.tx)
			if err != nil || len(all) != 2 {
				t.Fatalf("namespaces %v %v", all, err)
			}
			var got *kvschema.Namespace
			for _, ns := range all {
				if ns.Name == tc.info.Name {
					got = ns
				}
			}
			if got == nil || got.Mode != tc.info.Mode || got.StoreURI != tc.info.StoreURI || got.Created != e.now {
				t.Fatalf("record %+v for %+v", got, tc.info)
			}
			root, err := e.fs.Stat(e.tx, super, tc.info.Name, "/")
			if err != nil || root.ID != got.Root || !root.IsDir() || root.Owner != tc.c.User ||
				root.Group != "supergroup" || root.Perm != rootPerm(got) || root.Mtime != e.now {
				t.Fatalf("root %+v %v", root, err)
			}
		})
	}
}

func TestNamespacesAreSeparate(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"zeta", "alpha"} {
		if err := e.createNamespace(super, kvschema.Namespace{Name: name, Mode: 1}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := namespace.Namespaces(e.tx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range all {
		names = append(names, ns.Name)
	}
	if strings.Join(names, ",") != "alpha,default,zeta" {
		t.Fatalf("namespaces %v", names)
	}
	e.write(super, "/same", "default")
	err = e.apply(func(tx kv.Txn, now int64) error {
		_, err := e.fs.Mkdirs(tx, now, super, "alpha", "/same", 0o755, 0, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := e.fs.Stat(e.tx, super, "alpha", "/same"); n == nil || !n.IsDir() {
		t.Fatalf("alpha /same: %+v", n)
	}
	if n := e.stat("/same"); n.IsDir() {
		t.Fatalf("default /same: %+v", n)
	}
	if s, _ := e.fs.ContentSummary(e.tx, super, "zeta", "/"); s != (namespace.Summary{Dirs: 1}) {
		t.Fatalf("zeta: %+v", s)
	}
	e.check()
}

func (e *env) deleteNamespace(c namespace.Caller, name string, mode namespace.NamespaceDelete) (*kvschema.Inode, error) {
	var root *kvschema.Inode
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		root, err = e.fs.DeleteNamespace(tx, now, c, name, mode)
		return err
	})
	return root, err
}

func TestDeleteNamespace(t *testing.T) {
	e := newEnv(t)
	e.tree("/a/b/c", "/a/d")
	if err := e.createNamespace(super, kvschema.Namespace{Name: "empty", Mode: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := e.deleteNamespace(alice, dflt, namespace.DeleteNow)
	wantErr(t, err, namespace.ErrPermission)
	_, err = e.deleteNamespace(super, "nope", namespace.DeleteNow)
	wantErr(t, err, namespace.ErrNoNamespace)
	for _, name := range []string{dflt, "empty"} {
		if _, err := e.deleteNamespace(super, name, namespace.DeleteNow); err != nil {
			t.Fatal(err)
		}
		_, err := e.fs.Stat(e.tx, super, name, "/")
		wantErr(t, err, namespace.ErrNoNamespace)
	}
	_, err = e.deleteNamespace(super, dflt, namespace.DeleteNow)
	wantErr(t, err, namespace.ErrNoNamespace)
	e.check()
	e.purgeAll(2)
	e.check()
	s, _ := readRaw(e.tx)
	if len(s.inodes) != 0 || len(s.dentries) != 0 || len(s.namespaces) != 0 || len(s.inline) != 0 {
		t.Fatalf("left: %d inodes, %d directories, %d namespaces", len(s.inodes), len(s.dentries), len(s.namespaces))
	}
	// The name can be used again, for a fresh namespace.
	if err := e.createNamespace(super, kvschema.Namespace{Name: dflt, Mode: 1}); err != nil {
		t.Fatal(err)
	}
	if s := e.summary("/"); s != (namespace.Summary{Dirs: 1}) {
		t.Fatalf("recreated: %+v", s)
	}
}

// rootPerm is the mode of a new namespace's root: 0755, and 0777 in cache
// mode, whose entries are guarded by the bucket's policy, not by modes.
func rootPerm(ns *kvschema.Namespace) uint16 {
	if ns.IsCache() {
		return 0o777
	}
	return 0o755
}

// A namespace that holds anything is deleted only when asked to: it is
// refused if the caller wants it deleted only when empty, and otherwise
// goes to the trash with everything in it, from which it comes back whole;
// its content is purged only once its time there is over. An empty one is
// removed at once.
func TestDeleteNamespaceToTrash(t *testing.T) {
	e := newEnvWith(t, namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16, NamespaceTrash: 100})
	e.tree("/a/b/c", "/a/d")
	e.write(super, "/a/f", "twelve bytes")
	if err := e.createNamespace(super, kvschema.Namespace{Name: "empty", Mode: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := e.deleteNamespace(super, dflt, namespace.DeleteIfEmpty)
	wantErr(t, err, namespace.ErrNotEmpty)
	if err == nil || !strings.Contains(err.Error(), "3 files, 2 directories and 22 bytes") {
		t.Fatalf("the refusal does not say what the namespace holds: %v", err)
	}
	if _, err := e.deleteNamespace(super, "empty", namespace.DeleteIfEmpty); err != nil {
		t.Fatal(err)
	}
	root, err := e.deleteNamespace(super, dflt, namespace.DeleteToTrash)
	if err != nil || root.SubFiles != 3 || root.SubDirs != 2 || root.SubLength != 22 {
		t.Fatalf("delete to the trash: %+v, %v", root, err)
	}
	deleted := e.now
	_, err = e.fs.Stat(e.tx, super, dflt, "/a")
	wantErr(t, err, namespace.ErrNoNamespace)
	wantErr(t, e.createNamespace(super, kvschema.Namespace{Name: dflt, Mode: 1}), namespace.ErrExists)
	_, err = e.deleteNamespace(super, dflt, namespace.DeleteToTrash)
	wantErr(t, err, namespace.ErrNoNamespace)
	wantErr(t, e.apply(func(tx kv.Txn, _ int64) error { return e.fs.RestoreNamespace(tx, alice, dflt) }), namespace.ErrPermission)
	if pending, _ := namespace.PurgePending(e.tx); pending {
		t.Fatal("a namespace in the trash is being purged")
	}
	if exp, _ := namespace.ExpiredNamespaces(e.tx, deleted+99); len(exp) != 0 {
		t.Fatalf("expired before its time: %+v", exp)
	}
	e.check()

	if err := e.apply(func(tx kv.Txn, _ int64) error { return e.fs.RestoreNamespace(tx, super, dflt) }); err != nil {
		t.Fatal(err)
	}
	if got := e.summary("/"); got != (namespace.Summary{Length: 22, Files: 3, Dirs: 3}) {
		t.Fatalf("restored: %+v", got)
	}
	wantErr(t, e.apply(func(tx kv.Txn, _ int64) error { return e.fs.RestoreNamespace(tx, super, dflt) }), namespace.ErrExists)

	// Deleted again, it is purged once its time is over, not before, and
	// not on the word of a purge meant for its earlier deletion.
	if _, err := e.deleteNamespace(super, dflt, namespace.DeleteToTrash); err != nil {
		t.Fatal(err)
	}
	again := e.now
	purge := func(at, deleted int64) bool {
		var done bool
		if err := e.apply(func(tx kv.Txn, _ int64) (err error) {
			done, err = namespace.PurgeNamespace(tx, at, dflt, deleted)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return done
	}
	if purge(again+99, again) || purge(again+200, deleted) {
		t.Fatal("purged early, or by a stale purge")
	}
	exp, _ := namespace.ExpiredNamespaces(e.tx, again+100)
	if len(exp) != 1 || exp[0].Name != dflt || exp[0].Deleted != again {
		t.Fatalf("expired: %+v", exp)
	}
	if !purge(again+100, again) {
		t.Fatal("not purged when its time was over")
	}
	e.purgeAll(3)
	e.check()
	s, _ := readRaw(e.tx)
	if len(s.namespaces) != 0 || len(s.inodes) != 0 || len(s.garbage) != 0 || len(s.inline) != 0 {
		t.Fatalf("left: %d namespaces, %d inodes, %d garbage", len(s.namespaces), len(s.inodes), len(s.garbage))
	}
}

// With no trash time, and for a namespace in the trash, DeleteNow and
// DeleteToTrash remove it at once.
func TestDeleteNamespaceWithoutTrash(t *testing.T) {
	e := newEnvWith(t, namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16})
	e.tree("/a")
	if _, err := e.deleteNamespace(super, dflt, namespace.DeleteToTrash); err != nil {
		t.Fatal(err)
	}
	s, _ := readRaw(e.tx)
	if len(s.namespaces) != 0 {
		t.Fatalf("namespace left: %+v", s.namespaces)
	}
	trashing := newEnvWith(t, namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16, NamespaceTrash: 1000})
	trashing.tree("/a")
	if _, err := trashing.deleteNamespace(super, dflt, namespace.DeleteToTrash); err != nil {
		t.Fatal(err)
	}
	if _, err := trashing.deleteNamespace(super, dflt, namespace.DeleteNow); err != nil {
		t.Fatal(err)
	}
	trashing.purgeAll(10)
	if s, _ := readRaw(trashing.tx); len(s.namespaces) != 0 || len(s.inodes) != 0 {
		t.Fatalf("left: %+v", s)
	}
}

func TestNamespaceNameRuleIsStated(t *testing.T) {
	e := newEnv(t)
	err := e.createNamespace(super, kvschema.Namespace{Name: "UPPER", Mode: 1})
	wantErr(t, err, namespace.ErrInvalidArgument)
	if err == nil || !strings.Contains(err.Error(), namespace.NamespaceNameRule) {
		t.Fatalf("the error does not state the rule: %v", err)
	}
}
