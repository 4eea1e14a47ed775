package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// dev starts a real `strata server --dev` process for the test and returns
// its address; it is killed when the test ends.
func dev(t *testing.T) string {
	t.Helper()
	return testcluster.StartDev(t, t.TempDir()).Addr
}

func TestOperationsAgainstRealProcess(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	created, err := c.Mkdirs(ctx, "/ops/a/b", 0o755)
	must(err)
	if !created {
		t.Fatal("mkdirs reported an existing directory")
	}
	if created, _ := c.Mkdirs(ctx, "/ops/a/b", 0o755); created {
		t.Fatal("second mkdirs reported created")
	}
	must(c.WriteFile(ctx, "/ops/a/b/small", []byte("hello strata"), client.CreateOptions{}))
	must(c.WriteFile(ctx, "strata://default/ops/a/empty", nil, client.CreateOptions{}))
	got, err := c.ReadFile(ctx, "/ops/a/b/small")
	must(err)
	if string(got) != "hello strata" {
		t.Fatalf("read back %q", got)
	}
	st, err := c.Stat(ctx, "/ops/a/b/small")
	must(err)
	if st.IsDir || st.Length != 12 || st.Perm != 0o644 || st.Owner != testcluster.Superuser() || st.UnderConstruction {
		t.Fatalf("status %+v", st)
	}
	final, err := c.Rename(ctx, "/ops/a/b", "/ops")
	must(err)
	if final != "/ops/b" {
		t.Fatalf("rename into a directory went to %q", final)
	}
	sum, err := c.ContentSummary(ctx, "/ops")
	must(err)
	if *sum != (client.ContentSummary{Length: 12, FileCount: 2, DirectoryCount: 3, SpaceConsumed: 12}) {
		t.Fatalf("summary %+v", *sum)
	}
	var walked []string
	must(c.Walk(ctx, "/ops", func(st *client.FileStatus) error { walked = append(walked, st.Path); return nil }))
	if want := "/ops /ops/a /ops/a/empty /ops/b /ops/b/small"; strings.Join(walked, " ") != want {
		t.Fatalf("walk: %v, want %s", walked, want)
	}
	must(c.SetPermission(ctx, "/ops/b/small", 0o600))
	must(c.SetTimes(ctx, "/ops/b/small", time.UnixMilli(1_000_000), time.Time{}))
	st, _ = c.Stat(ctx, "/ops/b/small")
	if st.Perm != 0o600 || st.ModTime.UnixMilli() != 1_000_000 {
		t.Fatalf("after chmod/touch: %+v", st)
	}
	if ok, err := c.Delete(ctx, "/ops", true); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, err := c.Stat(ctx, "/ops/b/small"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("stat after delete: %v", err)
	}
}

func TestListingPagesThroughLargeDirectory(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	const n = 2*client.ListPageSize + 17
	for i := range n {
		if _, err := c.Mkdirs(ctx, fmt.Sprintf("/big/d%05d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	i := 0
	err := c.List(ctx, "/big", func(st *client.FileStatus) error {
		if want := fmt.Sprintf("d%05d", i); st.Name != want {
			return fmt.Errorf("entry %d is %s, want %s", i, st.Name, want)
		}
		i++
		return nil
	})
	if err != nil || i != n {
		t.Fatalf("listed %d of %d: %v", i, n, err)
	}
}

func TestLeaseConflictAndRecovery(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	a := testcluster.Client(t, addr, "")
	b := testcluster.Client(t, addr, "")
	w, err := a.Create(ctx, "/lease/f", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, "/lease/f", client.CreateOptions{Overwrite: true}); !errors.Is(err, fserr.ErrLeaseConflict) {
		t.Fatalf("second writer: %v", err)
	}
	if st, _ := b.Stat(ctx, "/lease/f"); !st.UnderConstruction {
		t.Fatal("file being written is not under construction")
	}
	if closed, err := b.RecoverLease(ctx, "/lease/f"); err != nil || !closed {
		t.Fatalf("recover: %v %v", closed, err)
	}
	if _, err := w.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, fserr.ErrNoLease) {
		t.Fatalf("close after recovery: %v", err)
	}
	if st, _ := b.Stat(ctx, "/lease/f"); st.UnderConstruction || st.Length != 0 {
		t.Fatalf("recovered file: %+v", st)
	}
}

// Bad input gets a clear error and changes nothing.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	if _, err := c.Mkdirs(ctx, "/bad/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "/bad/file", []byte("x"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 256)
	cases := []struct {
		name string
		op   func() error
		want error
	}{
		{"empty component", func() error { _, err := c.Mkdirs(ctx, "/bad//x", 0o755); return err }, fserr.ErrInvalidPath},
		{"dot-dot", func() error { _, err := c.Mkdirs(ctx, "/bad/../x", 0o755); return err }, fserr.ErrInvalidPath},
		{"dot", func() error { _, err := c.Stat(ctx, "/bad/./dir"); return err }, fserr.ErrInvalidPath},
		{"NUL", func() error { _, err := c.Mkdirs(ctx, "/bad/a\x00b", 0o755); return err }, fserr.ErrInvalidPath},
		{"name over 255 bytes", func() error { _, err := c.Mkdirs(ctx, "/bad/"+long, 0o755); return err }, fserr.ErrInvalidPath},
		{"relative", func() error { _, err := c.Stat(ctx, "bad"); return err }, fserr.ErrInvalidPath},
		{"not UTF-8", func() error { return c.WriteFile(ctx, "/bad/\xffname", nil, client.CreateOptions{}) }, fserr.ErrInvalidPath},
		{"stat of not UTF-8", func() error { _, err := c.Stat(ctx, "/bad/\xffname"); return err }, fserr.ErrInvalidPath},
		{"colon", func() error { _, err := c.Mkdirs(ctx, "/bad/a:b", 0o755); return err }, fserr.ErrInvalidPath},
		{"newline", func() error { _, err := c.Create(ctx, "/bad/nl\nx", client.CreateOptions{}); return err }, fserr.ErrInvalidPath},
		{"rename to a tab", func() error { _, err := c.Rename(ctx, "/bad/file", "/bad/tab\tx"); return err }, fserr.ErrInvalidPath},
		{"stat of a colon", func() error { _, err := c.Stat(ctx, "/bad/a:b"); return err }, fserr.ErrNotFound},
		{"owner not UTF-8", func() error { return c.SetOwner(ctx, "/bad/file", "\xff", "") }, fserr.ErrInvalidArgument},
		{"missing parent", func() error { _, err := c.Mkdir(ctx, "/bad/no/x", 0o755); return err }, fserr.ErrNotFound},
		{"create non-recursive", func() error {
			_, err := c.Create(ctx, "/bad/no/f", client.CreateOptions{NonRecursive: true})
			return err
		}, fserr.ErrNotFound},
		{"open a directory", func() error { _, err := c.Open(ctx, "/bad/dir"); return err }, fserr.ErrIsDir},
		{"create over a directory", func() error {
			_, err := c.Create(ctx, "/bad/dir", client.CreateOptions{Overwrite: true})
			return err
		}, fserr.ErrIsDir},
		{"mkdir under a file", func() error { _, err := c.Mkdirs(ctx, "/bad/file/x", 0o755); return err }, fserr.ErrParentNotDir},
		{"create exclusive over a file", func() error { _, err := c.Create(ctx, "/bad/file", client.CreateOptions{}); return err }, fserr.ErrExists},
		{"rename into itself", func() error { _, err := c.Rename(ctx, "/bad", "/bad/dir"); return err }, fserr.ErrRenameLoop},
		{"rename the root", func() error { _, err := c.Rename(ctx, "/", "/x"); return err }, fserr.ErrRoot},
		{"delete non-empty", func() error { _, err := c.Delete(ctx, "/bad", false); return err }, fserr.ErrNotEmpty},
		{"unknown namespace", func() error { _, err := c.Stat(ctx, "strata://nope/x"); return err }, fserr.ErrNoNamespace},
		{"block size too large", func() error {
			_, err := c.Create(ctx, "/bad/huge", client.CreateOptions{BlockSize: 1 << 50})
			return err
		}, fserr.ErrInvalidArgument},
		{"block size too small", func() error {
			_, err := c.Create(ctx, "/bad/tiny", client.CreateOptions{BlockSize: 1})
			return err
		}, fserr.ErrInvalidArgument},
	}
	for _, tc := range cases {
		if err := tc.op(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	var names []string
	if err := c.Walk(ctx, "/bad", func(st *client.FileStatus) error { names = append(names, st.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "/bad /bad/dir /bad/file" {
		t.Fatalf("bad input changed the namespace: %s", got)
	}
}

func TestPermissionDenied(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	admin := testcluster.Client(t, addr, "")
	bob := testcluster.Client(t, addr, "bob", "staff")
	if _, err := admin.Mkdirs(ctx, "/secure/private", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := admin.WriteFile(ctx, "/secure/readme", []byte("r"), client.CreateOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	denied := []struct {
		name string
		op   func() error
	}{
		{"create in a root-owned dir", func() error { _, err := bob.Create(ctx, "/secure/x", client.CreateOptions{}); return err }},
		{"traverse a 0700 dir", func() error { _, err := bob.Stat(ctx, "/secure/private/x"); return err }},
		{"list a 0700 dir", func() error { _, err := bob.ReadDir(ctx, "/secure/private"); return err }},
		{"read a 0600 file", func() error { _, err := bob.ReadFile(ctx, "/secure/readme"); return err }},
		{"delete in a root-owned dir", func() error { _, err := bob.Delete(ctx, "/secure/readme", false); return err }},
		{"chmod another's file", func() error { return bob.SetPermission(ctx, "/secure/readme", 0o777) }},
		{"chown", func() error { return bob.SetOwner(ctx, "/secure/readme", "bob", "") }},
		{"create a namespace", func() error {
			return bob.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "mine", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK,
				StoreUri: "file:///tmp/x"})
		}},
	}
	for _, tc := range denied {
		if err := tc.op(); !errors.Is(err, fserr.ErrPermission) {
			t.Errorf("%s: got %v, want permission denied", tc.name, err)
		}
	}
	if data, err := admin.ReadFile(ctx, "/secure/readme"); err != nil || !bytes.Equal(data, []byte("r")) {
		t.Fatalf("denied operations changed the file: %q %v", data, err)
	}
}

func TestNamespaces(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	bucket := "file://" + t.TempDir()
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "warehouse",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: bucket}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "warehouse",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: bucket}); !errors.Is(err, fserr.ErrExists) {
		t.Fatalf("duplicate namespace: %v", err)
	}
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "Bad Name",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: bucket}); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := c.Mkdirs(ctx, "strata://warehouse/t1", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, "/t1"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("namespaces are not separate: %v", err)
	}
	list, err := c.Namespaces(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "default" || list[1].Name != "warehouse" {
		t.Fatalf("namespaces: %v %v", list, err)
	}
	if _, err := c.DeleteNamespace(ctx, "warehouse", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_IF_EMPTY); !errors.Is(err, fserr.ErrNotEmpty) {
		t.Fatalf("delete of a namespace that holds a directory, if empty: %v", err)
	}
	r, err := c.DeleteNamespace(ctx, "warehouse", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH)
	if err != nil || r.Directories != 2 {
		t.Fatalf("delete to the trash: %v %v", r, err)
	}
	if _, err := c.Stat(ctx, "strata://warehouse/t1"); !errors.Is(err, fserr.ErrNoNamespace) {
		t.Fatalf("after delete: %v", err)
	}
	if err := c.RestoreNamespace(ctx, "warehouse"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, "strata://warehouse/t1"); err != nil {
		t.Fatalf("after restore: %v", err)
	}
	if _, err := c.DeleteNamespace(ctx, "warehouse", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_NOW); err != nil {
		t.Fatal(err)
	}
	if err := c.RestoreNamespace(ctx, "warehouse"); !errors.Is(err, fserr.ErrNoNamespace) {
		t.Fatalf("restore after a delete for good: %v", err)
	}
}

// A small file goes in one call once the client knows the inline limit; a
// service restarted with a lower limit refuses that call, and the client
// streams the content to a worker instead.
func TestWriteFileAcrossALoweredInlineLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := testcluster.StartGroup(t, 1)
	testcluster.StartWorker(t, g.Meta(), t.TempDir())
	c := g.Client("")
	data := bytes.Repeat([]byte("0123456789"), 10)
	for _, p := range []string{"/learns", "/one-call"} {
		if err := c.WriteFile(ctx, p, data, client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	g.Kill(1)
	g.Start(1, "--inline-limit", "16")
	for { // the worker registers again with the restarted service
		if ws, err := c.WorkerStats(ctx); err == nil && len(ws) > 0 {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("no worker came back: %v", err)
		}
	}
	if err := c.WriteFile(ctx, "/streamed", data, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/learns", "/one-call", "/streamed"} {
		got, err := c.ReadFile(ctx, p)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read %q, %v", p, got, err)
		}
	}
	if st, err := c.Stat(ctx, "/streamed"); err != nil || st.UnderConstruction {
		t.Fatalf("stat /streamed: %+v, %v", st, err)
	}
}
