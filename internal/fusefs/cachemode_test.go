package fusefs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestCacheMode mounts a cache-mode namespace over a bucket (a local
// directory, file://) that already holds files: they read through the
// mount as they are in the bucket, and a file written through the mount
// lands in the bucket as a plain object at its path, read back whole.
func TestCacheMode(t *testing.T) {
	srv := devServer(t)
	lake := t.TempDir()
	if err := os.MkdirAll(filepath.Join(lake, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeRandom(t, filepath.Join(lake, "sub", "there"), testBlock+5, 7)
	cmd := exec.Command(testcluster.Binary(t), "admin", "ns", "create", "lake", "--mode", "cache",
		"--store", "file://"+lake, "--meta", srv.Addr, "--plaintext")
	cmd.Env = append(os.Environ(), "STRATA_TOKEN="+testcluster.Token(t, srv.Addr, ""))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("admin ns create: %v\n%s", err, out)
	}
	m := mount(t, srv.Addr, "lake")
	if got, want := sha256sumOf(t, m.path("sub/there")), sha256Go(t, filepath.Join(lake, "sub", "there")); got != want {
		t.Errorf("a bucket's file through the mount: sha256 %s, want %s", got, want)
	}
	src := filepath.Join(t.TempDir(), "new")
	writeRandom(t, src, 2*testBlock+3, 8)
	run(t, m.Dir, "cp", src, m.path("sub/new"))
	want := sha256Go(t, src)
	if got := sha256Go(t, filepath.Join(lake, "sub", "new")); got != want {
		t.Errorf("the file written through the mount, in the bucket: sha256 %s, want %s", got, want)
	}
	if got := sha256sumOf(t, m.path("sub/new")); got != want {
		t.Errorf("the file written through the mount, read back: sha256 %s, want %s", got, want)
	}
	if out := run(t, m.Dir, "ls", "sub"); out != "new\nthere\n" {
		t.Errorf("ls sub: %q, want new and there", out)
	}
}
