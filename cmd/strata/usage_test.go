package main_test

import (
	"context"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// admin usage shows each namespace's files, directories and bytes, from
// its root's aggregates, and the work queued; only a superuser may ask.
func TestAdminUsage(t *testing.T) {
	ctx := testContext(t)
	p := testcluster.Start(t, t.TempDir(), "meta")
	c := testcluster.Client(t, p.Addr, "")
	if err := c.CreateNamespace(context.Background(), &pb.NamespaceInfo{Name: "default",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(context.Background(), "/a/b/f", []byte("0123456789"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	strataCLI(ctx, t, "admin", "usage", "--meta", p.Addr).want(t, 0,
		`NAMESPACE\s+MODE\s+FILES\s+DIRS\s+BYTES\s+STATE\n`+
			`default\s+block\s+1\s+3\s+10B\s+live\n`+
			`queued: 0 files being written, 0 blocks of deleted files to collect, none deleted trees to purge\n`+
			`leader: version \S+, up since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, 0 live workers\n`, "")
	alice := testcluster.Client(t, p.Addr, "alice")
	if _, err := alice.ServerStatus(context.Background()); err == nil {
		t.Fatal("alice, no superuser, was told the server's status")
	}
}
