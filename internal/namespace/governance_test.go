package namespace_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
)

func (e *env) setXAttr(c namespace.Caller, path, name string, value []byte) error {
	return e.apply(func(tx kv.Txn, _ int64) error {
		return e.fs.SetXAttr(tx, c, dflt, path, name, value, namespace.XAttrCreate|namespace.XAttrReplace)
	})
}

func (e *env) setQuota(path string, names, space int64) {
	e.t.Helper()
	if err := e.apply(func(tx kv.Txn, _ int64) error { return e.fs.SetQuota(tx, super, dflt, path, names, space) }); err != nil {
		e.t.Fatal(err)
	}
}

// HDFS's limits: a name and value of 16384 bytes together, 32 user and
// trusted attributes an inode (the security marker not counted).
func TestXAttrLimits(t *testing.T) {
	e := newEnv(t)
	e.write(super, "/f", "x")
	e.chown("/f", "alice", "")
	name := "user." + strings.Repeat("n", 100)
	if err := e.setXAttr(alice, "/f", name, make([]byte, namespace.MaxXAttrSize-100)); err != nil {
		t.Fatalf("the largest attribute: %v", err)
	}
	err := e.setXAttr(alice, "/f", name, make([]byte, namespace.MaxXAttrSize-99))
	if !errors.Is(err, fserr.ErrInvalidArgument) || !strings.Contains(err.Error(), "but the total size is 16385") {
		t.Fatalf("one byte more: %v", err)
	}
	for i := 1; i < namespace.MaxXAttrs; i++ {
		c := alice
		if i%2 == 0 {
			name, c = fmt.Sprintf("trusted.t%d", i), super
		} else {
			name = fmt.Sprintf("user.u%d", i)
		}
		if err := e.setXAttr(c, "/f", name, nil); err != nil {
			t.Fatalf("attribute %d: %v", i+1, err)
		}
	}
	if err := e.setXAttr(alice, "/f", namespace.UnreadableBySuperuser, nil); err != nil {
		t.Fatalf("the security marker past 32: %v", err)
	}
	err = e.setXAttr(alice, "/f", "user.one-more", nil)
	if !errors.Is(err, fserr.ErrInvalidArgument) || !strings.Contains(err.Error(), "would exceed limit of 32") {
		t.Fatalf("the 33rd: %v", err)
	}
	if err := e.setXAttr(alice, "/f", "user.u1", []byte("replaced")); err != nil {
		t.Fatalf("replacing one at the limit: %v", err)
	}
	e.check()
}

// A file's and a directory's attributes go with them: deleted at once, or
// by the purge of a subtree.
func TestXAttrsGoWithTheirInodes(t *testing.T) {
	e := newEnv(t)
	e.tree("/a/b/f", "/a/g")
	for _, p := range []string{"/a", "/a/b", "/a/b/f", "/a/g"} {
		if err := e.setXAttr(super, p, "user.x", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	e.check()
	if _, err := e.delete(super, "/a/g", false); err != nil {
		t.Fatal(err)
	}
	e.check()
	if _, err := e.delete(super, "/a", true); err != nil {
		t.Fatal(err)
	}
	e.purgeAll(1)
	e.check()
	start, _ := kvschema.XAttrRange(0)
	_, end := kvschema.XAttrRange(1 << 62)
	left := 0
	if err := e.tx.Scan(start, end, func(_, _ []byte) bool { left++; return true }); err != nil || left != 0 {
		t.Fatalf("%d attributes left (%v)", left, err)
	}
}

// Quotas stay exact however entries move between directories with quotas,
// and a refused move moves nothing.
func TestQuotasAcrossRenames(t *testing.T) {
	e := newEnv(t)
	e.tree("/p/a/f1", "/p/a/f2", "/q/x/keep")
	e.setQuota("/p", 6, namespace.QuotaReset)
	e.setQuota("/q", 4, namespace.QuotaReset)
	before := e.summary("/q")
	if _, err := e.rename(super, "/p/a", "/q/x/a", namespace.RenameOptions{}); !errors.Is(err, fserr.ErrNSQuotaExceeded) {
		t.Fatalf("moving 3 names into a directory with room for 1: %v", err)
	}
	if e.summary("/q") != before || !e.exists("/p/a/f1") || e.exists("/q/x/a") {
		t.Fatal("a refused rename moved something")
	}
	if _, err := e.rename(super, "/p/a/f1", "/q/x/f1", namespace.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rename(super, "/q/x/f1", "/p/f1", namespace.RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rename(super, "/p/a", "/q/x/a", namespace.RenameOptions{}); !errors.Is(err, fserr.ErrNSQuotaExceeded) {
		t.Fatalf("moving 2 names where 1 fits: %v", err)
	}
	e.check()
}

// SetDirQuota is what a bulk load writes: the quota on the directory's
// record, checked from then on.
func TestSetDirQuota(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	err := e.apply(func(tx kv.Txn, _ int64) error {
		n := e.stat("/d")
		return namespace.SetDirQuota(tx, n, kvschema.Quota{Names: 1, Space: kvschema.NoQuota})
	})
	if err != nil {
		t.Fatal(err)
	}
	if q := e.stat("/d").Quota; q == nil || *q != (kvschema.Quota{Names: 1, Space: kvschema.NoQuota}) {
		t.Fatalf("quota %+v", q)
	}
	if _, err := e.mkdirs(super, "/d/x", 0o755, 0, false); !errors.Is(err, fserr.ErrNSQuotaExceeded) {
		t.Fatalf("mkdir under a full quota: %v", err)
	}
	if err := e.apply(func(tx kv.Txn, _ int64) error {
		return namespace.SetDirQuota(tx, e.stat("/d"), kvschema.Quota{Names: kvschema.NoQuota, Space: kvschema.NoQuota})
	}); err != nil || e.stat("/d").Quota != nil {
		t.Fatalf("clearing: %v %+v", err, e.stat("/d").Quota)
	}
}

func TestDSQuotaMessage(t *testing.T) {
	e := newEnv(t)
	e.mkdir("/d")
	e.setQuota("/d", namespace.QuotaDontSet, 1152)
	err := e.apply(func(tx kv.Txn, now int64) error {
		_, err := e.fs.Create(tx, now, super, dflt, "/d/f", namespace.CreateOptions{Perm: 0o644, Holder: "h",
			Closed: true, Data: make([]byte, 1153)})
		return err
	})
	want := "The DiskSpace quota of /d is exceeded: quota = 1152 B = 1.13 KB but diskspace consumed = 1153 B = 1.13 KB"
	if !errors.Is(err, fserr.ErrDSQuotaExceeded) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v\nwant ...%s", err, want)
	}
}
