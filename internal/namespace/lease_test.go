package namespace_test

import (
	"slices"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func allLeases(t testing.TB, e *env) []lease {
	t.Helper()
	var out []lease
	if err := namespace.Leases(e.tx, func(h string, ino uint64) bool {
		out = append(out, lease{h, ino})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) expire(holder string, ino uint64) {
	e.t.Helper()
	if err := e.apply(func(tx kv.Txn, _ int64) error { return e.fs.ExpireLease(tx, holder, ino, nil) }); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) recoverLease(c namespace.Caller, path string) (bool, error) {
	var ok bool
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		ok, err = e.fs.RecoverLease(tx, now, c, dflt, path, nil)
		return err
	})
	return ok, err
}

func TestLeasesListing(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	var ids []uint64
	for _, c := range []struct{ path, holder string }{{"/d/a", "h2"}, {"/d/b", "h1"}, {"/d/c", "h2"}, {"/d/d", "h10"}} {
		n, err := e.create(super, c.path, namespace.CreateOptions{Holder: c.holder})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n.ID)
	}
	want := []lease{{"h1", ids[1]}, {"h10", ids[3]}, {"h2", ids[0]}, {"h2", ids[2]}} // by holder, then inode
	if got := allLeases(t, e); !slices.Equal(got, want) {
		t.Fatalf("leases %v, want %v", got, want)
	}
	var first []lease
	err := namespace.Leases(e.tx, func(h string, ino uint64) bool {
		first = append(first, lease{h, ino})
		return len(first) < 2
	})
	if err != nil || !slices.Equal(first, want[:2]) {
		t.Fatalf("stopped listing: %v %v", first, err)
	}
}

func TestRecoverLease(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	e.chmod("/d", 0o777)
	n, err := e.create(alice, "/d/f", namespace.CreateOptions{Perm: 0o644, Holder: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	mtime := e.now

	_, err = e.recoverLease(bob, "/d/f") // bob may not write the file
	wantErr(t, err, namespace.ErrPermission)
	for _, p := range []string{"/d", "/"} {
		_, err = e.recoverLease(super, p)
		wantErr(t, err, namespace.ErrIsDir)
	}
	_, err = e.recoverLease(super, "/d/nope")
	wantErr(t, err, namespace.ErrNotFound)

	ok, err := e.recoverLease(alice, "/d/f")
	if err != nil || !ok {
		t.Fatalf("recoverLease: %v %v", ok, err)
	}
	// Closed at the last committed length, which is all a writer that
	// never completed has.
	if got := e.stat("/d/f"); got.Holder != "" || got.Length != 0 || got.Mtime != mtime {
		t.Fatalf("after recovery: %+v", got)
	}
	if l := allLeases(t, e); len(l) != 0 {
		t.Fatalf("leases %v", l)
	}
	err = e.complete(alice, "/d/f", namespace.CompleteOptions{Inode: n.ID, Holder: "h1", Length: 1, Inline: true, Data: []byte("x")})
	wantErr(t, err, namespace.ErrNoLease) // the old writer lost its lease
	if ok, err := e.recoverLease(super, "/d/f"); err != nil || !ok {
		t.Fatalf("recovering a closed file: %v %v", ok, err)
	}
	// The recovered file can be replaced.
	if _, err := e.create(alice, "/d/f", namespace.CreateOptions{Holder: "h2", Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	e.check()
}

// A file that was completed once keeps that length when a rewrite is
// abandoned and recovered: the new writer's data was never committed.
func TestRecoverLeaseKeepsCommittedLength(t *testing.T) {
	e := newEnv(t)
	e.write(super, "/f", "hello")
	if got := e.stat("/f"); got.Length != 5 {
		t.Fatalf("%+v", got)
	}
	n, err := e.create(super, "/g", namespace.CreateOptions{Holder: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.recoverLease(super, "/g"); err != nil {
		t.Fatal(err)
	}
	if got := e.stat("/g"); got.ID != n.ID || got.Length != 0 || got.Holder != "" {
		t.Fatalf("%+v", got)
	}
	if s := e.summary("/"); s != (namespace.Summary{Length: 5, Files: 2, Dirs: 1}) {
		t.Fatalf("summary %+v", s)
	}
}

func TestExpireLease(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	a, _ := e.create(super, "/d/a", namespace.CreateOptions{Holder: "h1"})
	b, _ := e.create(super, "/d/b", namespace.CreateOptions{Holder: "h1"})
	c, _ := e.create(super, "/d/c", namespace.CreateOptions{Holder: "h2"})

	e.expire("h1", a.ID)
	if got := e.stat("/d/a"); got.Holder != "" {
		t.Fatalf("not closed: %+v", got)
	}
	e.expire("h1", c.ID) // h1 does not write c: nothing happens
	e.expire("h9", 9999) // no such file
	if got := allLeases(t, e); !slices.Equal(got, []lease{{"h1", b.ID}, {"h2", c.ID}}) {
		t.Fatalf("leases %v", got)
	}
	if got := e.stat("/d/c"); got.Holder != "h2" {
		t.Fatalf("expired the wrong lease: %+v", got)
	}

	// A stale lease key (its file closed by other means) is dropped.
	e.tx.Set(kvschema.LeaseKey("h3", b.ID), nil)
	e.expire("h3", b.ID)
	if got := e.stat("/d/b"); got.Holder != "h1" {
		t.Fatalf("%+v", got)
	}
	if got := allLeases(t, e); !slices.Equal(got, []lease{{"h1", b.ID}, {"h2", c.ID}}) {
		t.Fatalf("leases %v", got)
	}

	// A file in a detached subtree keeps its lease until purged or expired.
	e.mkdir("/d/sub")
	s, _ := e.create(super, "/d/sub/s", namespace.CreateOptions{Holder: "h4"})
	if _, err := e.delete(super, "/d/sub", true); err != nil {
		t.Fatal(err)
	}
	if got := allLeases(t, e); !slices.Contains(got, lease{"h4", s.ID}) {
		t.Fatalf("leases %v", got)
	}
	e.expire("h4", s.ID)
	if got := allLeases(t, e); slices.Contains(got, lease{"h4", s.ID}) {
		t.Fatalf("leases %v", got)
	}
	e.check()
	e.purgeAll(2)
	e.check()
}

// A copy's temporary file whose lease expires (its copier was killed) is
// removed, not closed: it would stay visible, empty, for good. Any other
// file is closed with what it has.
func TestExpiredCopyingFileIsRemoved(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	tmp, err := e.create(super, "/d/f"+namespace.CopyingSuffix, namespace.CreateOptions{Holder: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.create(super, "/d/g", namespace.CreateOptions{Holder: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	e.expire("h1", tmp.ID)
	e.expire("h1", other.ID)
	if e.exists("/d/f" + namespace.CopyingSuffix) {
		t.Fatal("the copy's temporary file is still there after its lease expired")
	}
	if n := e.stat("/d/g"); n.Holder != "" {
		t.Fatalf("/d/g is still open by %q", n.Holder)
	}
	if s := e.summary("/d"); s.Files != 1 {
		t.Fatalf("/d counts %d files, want 1", s.Files)
	}
	if got := allLeases(t, e); len(got) != 0 {
		t.Fatalf("leases left: %v", got)
	}
	e.check()
}
