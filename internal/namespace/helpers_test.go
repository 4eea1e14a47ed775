package namespace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

// Callers shared by the tests: a superuser and two ordinary users who share
// the group "staff".
var (
	super = namespace.Caller{User: "super"}
	alice = namespace.Caller{User: "alice", Groups: []string{"staff"}}
	bob   = namespace.Caller{User: "bob", Groups: []string{"staff", "eng"}}
)

const dflt = namespace.DefaultNamespace

// env is a namespace over an in-memory store, with every mutation applied
// the way the server applies a command: in its own overlay, kept only when
// the operation succeeds.
type env struct {
	t   testing.TB
	fs  *namespace.FS
	tx  *kv.Mem
	now int64 // advanced by every command
}

func newEnv(t testing.TB) *env { return newEnvWith(t, namespace.DefaultConfig("super")) }

func newEnvWith(t testing.TB, cfg namespace.Config) *env {
	e := &env{t: t, fs: namespace.New(cfg), tx: kv.NewMem(), now: 1000}
	err := e.apply(func(tx kv.Txn, now int64) error {
		return e.fs.CreateNamespace(tx, now, super, kvschema.Namespace{Name: dflt, Mode: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// apply runs one command in its own overlay and keeps its writes only on
// success.
func (e *env) apply(op func(tx kv.Txn, now int64) error) error {
	e.now++
	ov := kv.NewOverlay(e.tx)
	err := op(ov, e.now)
	if err == nil {
		ov.ApplyTo(e.tx)
	}
	return err
}

func (e *env) mkdirs(c namespace.Caller, path string, perm, umask uint16, parents bool) (bool, error) {
	var created bool
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		created, err = e.fs.Mkdirs(tx, now, c, dflt, path, perm, umask, parents)
		return err
	})
	return created, err
}

func (e *env) create(c namespace.Caller, path string, o namespace.CreateOptions) (*kvschema.Inode, error) {
	var n *kvschema.Inode
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		n, err = e.fs.Create(tx, now, c, dflt, path, o)
		return err
	})
	return n, err
}

func (e *env) complete(c namespace.Caller, path string, o namespace.CompleteOptions) error {
	return e.apply(func(tx kv.Txn, now int64) error { return e.fs.Complete(tx, now, c, dflt, path, o) })
}

func (e *env) delete(c namespace.Caller, path string, recursive bool) (bool, error) {
	var ok bool
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		ok, err = e.fs.Delete(tx, now, c, dflt, path, recursive)
		return err
	})
	return ok, err
}

func (e *env) rename(c namespace.Caller, src, dst string, o namespace.RenameOptions) (string, error) {
	var final string
	err := e.apply(func(tx kv.Txn, now int64) (err error) {
		final, err = e.fs.Rename(tx, now, c, dflt, src, dst, o)
		return err
	})
	return final, err
}

func (e *env) purge(limit int) int {
	var n int
	err := e.apply(func(tx kv.Txn, _ int64) (err error) {
		n, err = namespace.Purge(tx, limit)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// purgeAll runs Purge with limit until nothing is pending and reports how
// many calls it took.
func (e *env) purgeAll(limit int) int {
	e.t.Helper()
	calls := 0
	for ; ; calls++ {
		pending, err := namespace.PurgePending(e.tx)
		if err != nil {
			e.t.Fatal(err)
		}
		if !pending {
			return calls
		}
		if n := e.purge(limit); n == 0 || n > limit {
			e.t.Fatalf("purge %d removed %d with work pending", limit, n)
		}
	}
}

// mkdir creates directory path and its parents as the superuser, mode 0755.
func (e *env) mkdir(path string) {
	e.t.Helper()
	if _, err := e.mkdirs(super, path, 0o755, 0, true); err != nil {
		e.t.Fatal(err)
	}
}

// write creates file path (and its parents) as c and closes it with data
// stored inline.
func (e *env) write(c namespace.Caller, path, data string) *kvschema.Inode {
	e.t.Helper()
	n, err := e.create(c, path, namespace.CreateOptions{Perm: 0o644, Parents: true, Overwrite: true, Holder: "w"})
	if err != nil {
		e.t.Fatal(err)
	}
	err = e.complete(c, path, namespace.CompleteOptions{Inode: n.ID, Holder: "w",
		Length: uint64(len(data)), Inline: true, Data: []byte(data)})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// tree builds a fixture: names ending in "/" are directories, the others
// files holding their own name as content.
func (e *env) tree(paths ...string) {
	e.t.Helper()
	for _, p := range paths {
		if strings.HasSuffix(p, "/") {
			e.mkdir(strings.TrimSuffix(p, "/"))
		} else {
			e.write(super, p, p)
		}
	}
}

func (e *env) stat(path string) *kvschema.Inode {
	e.t.Helper()
	n, err := e.fs.Stat(e.tx, super, dflt, path)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) exists(path string) bool {
	_, err := e.fs.Stat(e.tx, super, dflt, path)
	return err == nil
}

func (e *env) summary(path string) namespace.Summary {
	e.t.Helper()
	s, err := e.fs.ContentSummary(e.tx, super, dflt, path)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// chmod sets path's mode as the superuser.
func (e *env) chmod(path string, perm uint16) {
	e.t.Helper()
	if err := e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetPermission(tx, super, dflt, path, perm) }); err != nil {
		e.t.Fatal(err)
	}
}

// chown sets path's owner and group as the superuser.
func (e *env) chown(path, owner, group string) {
	e.t.Helper()
	if err := e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetOwner(tx, super, dflt, path, owner, group) }); err != nil {
		e.t.Fatal(err)
	}
}

// check fails unless the store passes every raw-keyspace invariant.
func (e *env) check() {
	e.t.Helper()
	if err := checkInvariants(e.tx); err != nil {
		e.t.Fatal(err)
	}
}

// wantErr fails unless err wraps want (or is nil when want is); a non-nil
// error must be a *namespace.PathError.
func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want %v", err, want)
	}
	var pe *namespace.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("%v (%T) is not a *namespace.PathError", err, err)
	}
}

var sentinels = []struct {
	name string
	err  error
}{
	{"ErrNotFound", namespace.ErrNotFound},
	{"ErrExists", namespace.ErrExists},
	{"ErrPermission", namespace.ErrPermission},
	{"ErrNotDir", namespace.ErrNotDir},
	{"ErrIsDir", namespace.ErrIsDir},
	{"ErrParentNotDir", namespace.ErrParentNotDir},
	{"ErrNotEmpty", namespace.ErrNotEmpty},
	{"ErrInvalidPath", namespace.ErrInvalidPath},
	{"ErrInvalidArgument", namespace.ErrInvalidArgument},
	{"ErrLeaseConflict", namespace.ErrLeaseConflict},
	{"ErrNoLease", namespace.ErrNoLease},
	{"ErrRenameLoop", namespace.ErrRenameLoop},
	{"ErrRoot", namespace.ErrRoot},
	{"ErrNoNamespace", namespace.ErrNoNamespace},
}

// errClass names the sentinel err wraps: "ok" for nil, "other(...)" for an
// error that wraps none or is not a *PathError.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *namespace.PathError
	if !errors.As(err, &pe) {
		return "other(" + err.Error() + ")"
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "other(" + err.Error() + ")"
}
