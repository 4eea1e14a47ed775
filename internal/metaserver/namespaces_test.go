package metaserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

const block = pb.NamespaceMode_NAMESPACE_MODE_BLOCK

// A namespace's bucket is checked before the namespace is made: a URI of
// no known kind, a relative directory and a directory that cannot be
// written are refused, each with the reason; nothing is created.
func TestCreateNamespaceChecksTheBucket(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.OpenStore = func(ctx context.Context, uri string) (object.Store, error) {
			if uri != "s3://read-only/x" {
				return objstore.Open(ctx, uri)
			}
			in := faulty.NewInjector(1)
			in.Set(faulty.Rule{Ops: []object.Op{object.OpPut}, Err: errors.New("AccessDenied")})
			return faulty.New(mem.New(), in), nil
		}
	})
	c := testcluster.Client(t, svc.Addr, "")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ uri, why string }{
		{"bogus://x", `unknown scheme`},
		{"file://relative/dir", `want file:///absolute/path`},
		{"", "no store URI"},
		{"file://" + file + "/bucket", "not a directory"},
		{"s3://read-only/x", "a probe object could not be written to the bucket"},
	} {
		err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "nope", Mode: block, StoreUri: tc.uri})
		if !errors.Is(err, fserr.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("store %q: %v, want invalid argument saying %q", tc.uri, err, tc.why)
		}
	}
	if list, err := c.Namespaces(ctx); err != nil || len(list) != 1 {
		t.Fatalf("namespaces after refusals: %v %v", list, err)
	}
	bucket := t.TempDir()
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "good", Mode: block, StoreUri: "file://" + bucket}); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(bucket); len(left) != 1 || left[0].Name() != ".strata-tmp" {
		t.Fatalf("the probe left %v in the bucket", left)
	}
}

// A deleted namespace that held anything waits in the trash for the
// service's time, then the leader removes it for good; restored meanwhile,
// it comes back whole.
func TestNamespaceTrashExpires(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.UnixMilli(1_790_000_000_000)}
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = clock.Now
		cfg.Namespace.NamespaceTrash = time.Hour.Milliseconds()
	})
	c := testcluster.Client(t, svc.Addr, "")
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "lake", Mode: block, StoreUri: "file://" + t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "strata://lake/a/f", []byte("small"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	trash := func() {
		t.Helper()
		if _, err := c.DeleteNamespace(ctx, "lake", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_TRASH); err != nil {
			t.Fatal(err)
		}
	}
	trash()
	clock.Advance(59 * time.Minute)
	if err := svc.Member.RunJob(ctx, metaserver.JobNamespaceTrash); err != nil {
		t.Fatal(err)
	}
	if err := c.RestoreNamespace(ctx, "lake"); err != nil {
		t.Fatalf("restore within the hour: %v", err)
	}
	if got, err := c.ReadFile(ctx, "strata://lake/a/f"); err != nil || string(got) != "small" {
		t.Fatalf("restored file: %q %v", got, err)
	}
	trash()
	clock.Advance(61 * time.Minute)
	if err := svc.Member.RunJob(ctx, metaserver.JobNamespaceTrash); err != nil {
		t.Fatal(err)
	}
	if err := c.RestoreNamespace(ctx, "lake"); !errors.Is(err, fserr.ErrNoNamespace) {
		t.Fatalf("restore after the hour: %v", err)
	}
	if list, err := c.Namespaces(ctx); err != nil || len(list) != 1 {
		t.Fatalf("namespaces: %v %v", list, err)
	}
}

// Garbage whose bucket cannot be opened any more (here, a URI that stopped
// meaning anything) is dropped, not retried for ever.
func TestGarbageOfAnUnusableBucketIsDropped(t *testing.T) {
	ctx := context.Background()
	var usable atomic.Bool
	var opens atomic.Int64
	usable.Store(true)
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.OpenStore = func(ctx context.Context, uri string) (object.Store, error) {
			if uri != "bogus://x" {
				return objstore.Open(ctx, uri)
			}
			opens.Add(1)
			if !usable.Load() {
				return nil, fmt.Errorf("objstore: %q: unknown scheme", uri)
			}
			return mem.New(), nil
		}
	})
	c := testcluster.Client(t, svc.Addr, "")
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: "nope", Mode: block, StoreUri: "bogus://x"}); err != nil {
		t.Fatal(err)
	}
	// A file left open: deleting it asks the collector to scan its bucket
	// for what its writer uploaded.
	if _, err := c.Create(ctx, "strata://nope/open", client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	usable.Store(false)
	if _, err := c.DeleteNamespace(ctx, "nope", pb.NamespaceDeleteMode_NAMESPACE_DELETE_MODE_NOW); err != nil {
		t.Fatal(err)
	}
	if err := svc.Member.RunJob(ctx, metaserver.JobPurge); err != nil {
		t.Fatal(err)
	}
	if err := svc.Member.RunJob(ctx, metaserver.JobGarbage); err != nil {
		t.Fatalf("collection: %v", err)
	}
	if n, err := svc.Member.GarbageQueued(); err != nil || n != 0 {
		t.Fatalf("%d garbage entries left (%v)", n, err)
	}
	if opens.Load() < 2 {
		t.Fatalf("the bucket was opened %d times: the collector never tried it", opens.Load())
	}
}

// The leader empties the users' trash as HDFS's emptier does: Current
// becomes a checkpoint, and checkpoints older than the interval go.
func TestEmptyTrash(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = clock.Now
		cfg.TrashInterval = time.Hour
	})
	c := testcluster.Client(t, svc.Addr, "")
	for _, p := range []string{"/user/alice/.Trash/Current/a", "/user/bob/.Trash/Current/b", "/user/bob/.Trash/junk"} {
		if err := c.WriteFile(ctx, p, []byte("x"), client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names := func(dir string) string {
		t.Helper()
		list, err := c.ReadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, st := range list {
			out = append(out, st.Name)
		}
		return strings.Join(out, ",")
	}
	if err := svc.Member.RunJob(ctx, metaserver.JobTrash); err != nil {
		t.Fatal(err)
	}
	if got := names("/user/alice/.Trash") + " " + names("/user/bob/.Trash"); got != "261126100000 261126100000,junk" {
		t.Fatalf("after the first run: %s", got)
	}
	if err := c.WriteFile(ctx, "/user/alice/.Trash/Current/c", []byte("x"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(61 * time.Minute)
	if err := svc.Member.RunJob(ctx, metaserver.JobTrash); err != nil {
		t.Fatal(err)
	}
	if got := names("/user/alice/.Trash") + " " + names("/user/bob/.Trash"); got != "261126110100 junk" {
		t.Fatalf("after the second run: %s", got)
	}
}
