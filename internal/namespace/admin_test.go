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

func TestDeleteNamespace(t *testing.T) {
	e := newEnv(t)
	e.tree("/a/b/c", "/a/d")
	if err := e.createNamespace(super, kvschema.Namespace{Name: "empty", Mode: 1}); err != nil {
		t.Fatal(err)
	}
	del := func(c namespace.Caller, name string) error {
		return e.apply(func(tx kv.Txn, _ int64) error { return e.fs.DeleteNamespace(tx, c, name) })
	}
	wantErr(t, del(alice, dflt), namespace.ErrPermission)
	wantErr(t, del(super, "nope"), namespace.ErrNoNamespace)
	for _, name := range []string{dflt, "empty"} {
		if err := del(super, name); err != nil {
			t.Fatal(err)
		}
		_, err := e.fs.Stat(e.tx, super, name, "/")
		wantErr(t, err, namespace.ErrNoNamespace)
	}
	wantErr(t, del(super, dflt), namespace.ErrNoNamespace)
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
