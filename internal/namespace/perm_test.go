package namespace_test

import (
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
)

// carol is a superuser by group membership.
var carol = namespace.Caller{User: "carol", Groups: []string{"eng", "supergroup"}}

// permFixture builds a tree with a bit of everything for permission tests:
//
//	/home/alice/f         alice's home and file
//	/home/alice/deny/     alice's, mode 077, group staff
//	/home/bob/f           bob's home and file
//	/home/bob/priv        bob's, mode 600
//	/home/bob/sticky/a    bob's sticky directory, a file of alice's in it
//	/ro/x                 the superuser's, read-only to others
//	/noexec/              mode 666: readable, not searchable
//	/wo/bobs              mode 733: writable and searchable, not readable
//	/private/secret       mode 700 directory
//	/shared/              mode 770, group eng
//	/tmp/alice /tmp/bob   mode 1777, a file of each
func permFixture(t testing.TB) *env {
	e := newEnv(t)
	e.tree("/home/", "/ro/x", "/noexec/", "/wo/", "/private/secret", "/shared/", "/tmp/")
	for _, u := range []string{"alice", "bob"} {
		e.mkdir("/home/" + u)
		e.chown("/home/"+u, u, "")
	}
	e.write(alice, "/home/alice/f", "alice's")
	if _, err := e.mkdirs(alice, "/home/alice/deny", 0o077, 0, false); err != nil {
		t.Fatal(err)
	}
	e.chown("/home/alice/deny", "", "staff")
	e.write(bob, "/home/bob/f", "bob's")
	e.write(bob, "/home/bob/priv", "private")
	e.chmod("/home/bob/priv", 0o600)
	if _, err := e.mkdirs(bob, "/home/bob/sticky", 0o1777, 0, false); err != nil {
		t.Fatal(err)
	}
	e.write(alice, "/home/bob/sticky/a", "a")
	e.chmod("/noexec", 0o666)
	e.chmod("/wo", 0o733)
	e.write(bob, "/wo/bobs", "bob's")
	e.chmod("/ro", 0o755)
	e.chmod("/private", 0o700)
	e.chown("/shared", "", "eng")
	e.chmod("/shared", 0o770)
	e.chmod("/tmp", 0o1777)
	e.write(alice, "/tmp/alice", "a")
	e.write(bob, "/tmp/bob", "b")
	return e
}

func TestPermissions(t *testing.T) {
	type op func(e *env, c namespace.Caller, p string) error
	var (
		stat = func(e *env, c namespace.Caller, p string) error { _, err := e.fs.Stat(e.tx, c, dflt, p); return err }
		list = func(e *env, c namespace.Caller, p string) error {
			_, err := e.fs.List(e.tx, c, dflt, p, "", 10)
			return err
		}
		open = func(e *env, c namespace.Caller, p string) error {
			_, _, err := e.fs.Open(e.tx, c, dflt, p)
			return err
		}
		summary = func(e *env, c namespace.Caller, p string) error {
			_, err := e.fs.ContentSummary(e.tx, c, dflt, p)
			return err
		}
		mkdir = func(e *env, c namespace.Caller, p string) error {
			_, err := e.mkdirs(c, p, 0o755, 0, false)
			return err
		}
		mkdirP = func(e *env, c namespace.Caller, p string) error {
			_, err := e.mkdirs(c, p, 0o755, 0, true)
			return err
		}
		create = func(e *env, c namespace.Caller, p string) error {
			_, err := e.create(c, p, namespace.CreateOptions{Holder: "h", Overwrite: true, Parents: true})
			return err
		}
		del = func(e *env, c namespace.Caller, p string) error {
			ok, err := e.delete(c, p, true)
			if err == nil && !ok {
				return namespace.ErrNotFound
			}
			return err
		}
	)
	for _, tc := range []struct {
		name string
		op   op
		c    namespace.Caller
		path string
		err  error
	}{
		{"stat needs search on ancestors", stat, alice, "/private/secret", namespace.ErrPermission},
		{"stat of an unreadable directory", stat, alice, "/private", nil},
		{"list needs read", list, alice, "/wo", namespace.ErrPermission},
		{"list needs search", list, alice, "/noexec", namespace.ErrPermission},
		{"list of a file needs neither", list, alice, "/home/bob/priv", nil},
		{"list of a readable directory", list, alice, "/home/bob", nil},
		{"open needs read", open, alice, "/home/bob/priv", namespace.ErrPermission},
		{"open by the owner", open, bob, "/home/bob/priv", nil},
		{"open of a readable file", open, alice, "/ro/x", nil},
		{"summary needs read and search", summary, alice, "/private", namespace.ErrPermission},
		{"summary of a file", summary, alice, "/home/bob/priv", nil},
		{"mkdir needs write", mkdir, alice, "/ro/new", namespace.ErrPermission},
		{"mkdir -p needs write on the nearest", mkdirP, alice, "/ro/new/deeper", namespace.ErrPermission},
		{"mkdir in a write-only directory", mkdir, alice, "/wo/new", nil},
		{"mkdir with group write", mkdir, bob, "/shared/new", nil},
		{"mkdir outside the group", mkdir, alice, "/shared/new", namespace.ErrPermission},
		{"owner bits decide for the owner", mkdir, alice, "/home/alice/deny/x", namespace.ErrPermission},
		{"group bits decide for the group", mkdir, bob, "/home/alice/deny/x", nil},
		{"create needs write", create, alice, "/ro/new", namespace.ErrPermission},
		{"create in the home", create, alice, "/home/alice/g", nil},
		{"overwrite needs write on the file", create, alice, "/wo/bobs", namespace.ErrPermission},
		{"overwrite of a writable file", create, bob, "/wo/bobs", nil},
		{"create under an unsearchable directory", create, alice, "/noexec/f", namespace.ErrPermission},
		{"delete needs write on the parent", del, alice, "/ro/x", namespace.ErrPermission},
		{"delete in the home", del, alice, "/home/alice/f", nil},
		{"delete in another's home", del, bob, "/home/alice/deny", namespace.ErrPermission},
		{"sticky: another's file", del, alice, "/tmp/bob", namespace.ErrPermission},
		{"sticky: own file", del, bob, "/tmp/bob", nil},
		{"sticky: the directory's owner", del, bob, "/home/bob/sticky/a", nil},
		{"sticky: the superuser", del, super, "/tmp/bob", nil},
		{"superuser by group", del, carol, "/private/secret", nil},
		{"superuser by group lists", list, carol, "/private", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := permFixture(t)
			wantErr(t, tc.op(e, tc.c, tc.path), tc.err)
			e.check()
		})
	}
}

func (e *env) setPermission(c namespace.Caller, path string, perm uint16) error {
	return e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetPermission(tx, c, dflt, path, perm) })
}

func (e *env) setOwner(c namespace.Caller, path, owner, group string) error {
	return e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetOwner(tx, c, dflt, path, owner, group) })
}

func (e *env) setTimes(c namespace.Caller, path string, mtime, atime int64) error {
	return e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetTimes(tx, c, dflt, path, mtime, atime) })
}

func TestSetPermission(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    namespace.Caller
		path string
		perm uint16
		want uint16 // when err is nil
		err  error
	}{
		{"owner", alice, "/home/alice/f", 0o600, 0o600, nil},
		{"owner of a directory", alice, "/home/alice", 0o1700, 0o1700, nil},
		{"bits beyond the mode", alice, "/home/alice/f", 0o177777, 0o7777, nil},
		{"not the owner", bob, "/home/alice/f", 0o777, 0, namespace.ErrPermission},
		{"not the owner, with write access", bob, "/tmp", 0o777, 0, namespace.ErrPermission},
		{"superuser", super, "/home/alice/f", 0o640, 0o640, nil},
		{"root", super, "/", 0o777, 0o777, nil},
		{"missing", super, "/home/nope", 0o777, 0, namespace.ErrNotFound},
		{"unsearchable parent", alice, "/private/secret", 0o777, 0, namespace.ErrPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := permFixture(t)
			err := e.setPermission(tc.c, tc.path, tc.perm)
			wantErr(t, err, tc.err)
			if err == nil && e.stat(tc.path).Perm != tc.want {
				t.Fatalf("perm %o, want %o", e.stat(tc.path).Perm, tc.want)
			}
		})
	}
}

func TestSetOwner(t *testing.T) {
	for _, tc := range []struct {
		name         string
		c            namespace.Caller
		path         string
		owner, group string
		want         [2]string // owner and group after, when err is nil
		err          error
	}{
		{"superuser gives away", super, "/home/alice/f", "bob", "eng", [2]string{"bob", "eng"}, nil},
		{"superuser by group", carol, "/home/alice/f", "bob", "", [2]string{"bob", "supergroup"}, nil},
		{"empty values keep", super, "/home/alice/f", "", "", [2]string{"alice", "supergroup"}, nil},
		{"owner picks an own group", alice, "/home/alice/f", "", "staff", [2]string{"alice", "staff"}, nil},
		{"owner names itself", alice, "/home/alice/f", "alice", "", [2]string{"alice", "supergroup"}, nil},
		{"owner picks a foreign group", alice, "/home/alice/f", "", "eng", [2]string{}, namespace.ErrPermission},
		{"owner gives away", alice, "/home/alice/f", "bob", "", [2]string{}, namespace.ErrPermission},
		{"not the owner", bob, "/home/alice/f", "", "staff", [2]string{}, namespace.ErrPermission},
		{"not the owner, changing nothing", bob, "/home/alice/f", "alice", "", [2]string{}, namespace.ErrPermission},
		{"missing", super, "/nope", "bob", "", [2]string{}, namespace.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := permFixture(t)
			err := e.setOwner(tc.c, tc.path, tc.owner, tc.group)
			wantErr(t, err, tc.err)
			if err != nil {
				return
			}
			if n := e.stat(tc.path); [2]string{n.Owner, n.Group} != tc.want {
				t.Fatalf("owner %s group %s, want %v", n.Owner, n.Group, tc.want)
			}
		})
	}
}

func TestSetTimes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		c            namespace.Caller
		path         string
		mtime, atime int64
		err          error
	}{
		{"owner", bob, "/home/bob/f", 5, 6, nil},
		{"owner without write access", bob, "/home/bob/sticky", 5, 6, nil},
		{"writer, not the owner", alice, "/tmp", 5, -1, nil},
		{"neither", alice, "/home/bob/f", 5, 6, namespace.ErrPermission},
		{"superuser", super, "/home/bob/priv", -1, 6, nil},
		{"missing", super, "/home/bob/nope", 5, 6, namespace.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := permFixture(t)
			if tc.path == "/home/bob/sticky" {
				e.chmod(tc.path, 0o555)
			}
			before, _ := e.fs.Stat(e.tx, super, dflt, tc.path)
			err := e.setTimes(tc.c, tc.path, tc.mtime, tc.atime)
			wantErr(t, err, tc.err)
			if err != nil {
				return
			}
			want := [2]int64{tc.mtime, tc.atime}
			if tc.mtime == -1 {
				want[0] = before.Mtime
			}
			if tc.atime == -1 {
				want[1] = before.Atime
			}
			if n := e.stat(tc.path); [2]int64{n.Mtime, n.Atime} != want {
				t.Fatalf("times %d %d, want %v", n.Mtime, n.Atime, want)
			}
		})
	}
}

// TestSubtreePermissions checks what HDFS checks of a subtree: a recursive
// delete needs rwx on every non-empty directory in it, a content summary
// r-x; an empty directory, or a file, below is not asked.
func TestSubtreePermissions(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/home")
	e.chmod("/home", 0o777)
	if _, err := e.mkdirs(alice, "/home/alice/open/inner", 0o777, 0, true); err != nil {
		t.Fatal(err)
	}
	e.write(alice, "/home/alice/open/inner/f", "x")
	e.tree("/home/alice/locked/f", "/home/alice/emptylocked/")
	e.chmod("/home/alice/locked", 0o755) // the superuser's, with a file in it
	e.chmod("/home/alice/emptylocked", 0o500)
	if ok, err := e.delete(alice, "/home/alice", true); err == nil || ok {
		t.Fatalf("alice deleted her home with a directory she cannot write in it: %v %v", ok, err)
	}
	if !e.exists("/home/alice/locked/f") {
		t.Fatal("a refused delete removed something")
	}
	if _, err := e.fs.ContentSummary(e.tx, bob, dflt, "/home/alice"); err != nil {
		t.Fatalf("bob's summary of what he may read and search: %v", err)
	}
	e.chmod("/home/alice/locked", 0o700)
	if _, err := e.fs.ContentSummary(e.tx, bob, dflt, "/home/alice"); err == nil {
		t.Fatal("bob summed up a subtree with a directory he cannot read in it")
	}
	if _, err := e.fs.ContentSummary(e.tx, carol, dflt, "/home/alice"); err != nil {
		t.Fatalf("a superuser's summary: %v", err)
	}
	e.chown("/home/alice/locked", "alice", "")
	if ok, err := e.delete(alice, "/home/alice", true); err != nil || !ok {
		t.Fatalf("alice's delete of her home, every non-empty directory hers, the empty one read-only: %v %v", ok, err)
	}
}
