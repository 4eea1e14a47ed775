package fsshell

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// In a cache-mode namespace, -ls shows the bucket's objects, and -du and
// -count say once that they count what Strata has loaded.
func TestCacheModeCounts(t *testing.T) {
	e := newEnv(t)
	bucket := t.TempDir()
	if err := os.MkdirAll(filepath.Join(bucket, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bucket, "d", "obj"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := e.srv.Member.EnsureNamespace(context.Background(), &pb.NamespaceInfo{Name: "lake",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_CACHE, StoreUri: "file://" + bucket, SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.expect(0, lines("strata://lake/d/obj"), "", "-ls", "-C", "strata://lake/d")
	note := "count: note: strata://lake/d is in a cache-mode namespace: the figures count what Strata has loaded " +
		"from its bucket ('strata admin load --metadata PATH' loads a subtree whole)\n"
	e.expect(0, lines("           1            1                  5 strata://lake/d"), note, "-count", "strata://lake/d")
	e.expect(0, lines("           1            0                  0 /"), "", "-count", "/")
}
