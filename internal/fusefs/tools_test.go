package fusefs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testBlock is the block size of the tests' services: small, so that a
// file of a few MiB is many blocks.
const testBlock = 4 << 20

// TestTools runs the tools people run in a mounted directory, and checks
// what they leave with sha256sum, diff and find's listing.
func TestTools(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	local := t.TempDir()
	for _, f := range []struct {
		name string
		size int64
	}{{"empty", 0}, {"one", 1}, {"block+1", testBlock + 1}, {"big", 300 << 20}} {
		src := filepath.Join(local, f.name)
		writeRandom(t, src, f.size, f.size)
		run(t, local, "cp", src, m.path(f.name))
		if got, want := sha256sumOf(t, m.path(f.name)), sha256Go(t, src); got != want {
			t.Errorf("%s (%d bytes): sha256sum says %s through the mount, want %s", f.name, f.size, got, want)
		}
	}
	run(t, m.Dir, "mv", "block+1", "moved")
	if _, err := os.Stat(m.path("block+1")); !os.IsNotExist(err) {
		t.Errorf("after mv, the old name: %v, want it gone", err)
	}
	if got, want := sha256sumOf(t, m.path("moved")), sha256Go(t, filepath.Join(local, "block+1")); got != want {
		t.Errorf("moved: %s, want %s", got, want)
	}
	tree := makeTree(t)
	run(t, m.Dir, "sh", "-c", fmt.Sprintf("mkdir t && tar -C %s -cf - . | tar -C t -xf -", tree))
	back := t.TempDir()
	run(t, m.Dir, "sh", "-c", fmt.Sprintf("tar -C t -cf - . | tar -C %s -xf -", back))
	run(t, m.Dir, "diff", "-r", tree, back)
	if got, want := listing(t, m.path("t")), listing(t, tree); got != want {
		t.Errorf("find through the mount:\n%s\nwant:\n%s", got, want)
	}
	// A stat right after close(2) shows what the close committed: make
	// compares mtimes.
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(m.path("one"), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.path("one")); err != nil { // the kernel caches the old mtime
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.path("one"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(m.path("one")); err != nil || fi.ModTime().Equal(old) || fi.Size() != 0 {
		t.Errorf("stat after open(O_TRUNC) and close: %v, %v; want a new mtime and 0 bytes", fi.ModTime(), err)
	}
	run(t, m.Dir, "rm", "-r", "t")
	if ents, err := os.ReadDir(m.Dir); err != nil || len(ents) != 4 {
		t.Errorf("after rm -r: %v, %v; want the 4 files", names(ents), err)
	}
}

// makeTree makes a local tree of directories and files of several sizes.
func makeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for i := range 5 {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i), "sub")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			writeRandom(t, filepath.Join(dir, fmt.Sprintf("f%02d", j)), int64(j*j*97), int64(i*100+j))
		}
	}
	writeRandom(t, filepath.Join(root, "d0", "large"), 3*testBlock+123, 7)
	if err := os.Chmod(filepath.Join(root, "d1", "sub", "f03"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// listing is find's listing of dir: relative paths, types, sizes and
// modes, sorted.
func listing(t *testing.T, dir string) string {
	t.Helper()
	out := run(t, dir, "find", ".", "-printf", "%p %y %s %m\n")
	ls := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range ls {
		if f := strings.Fields(l); len(f) == 4 && f[1] == "d" {
			ls[i] = f[0] + " d " + f[3] // a directory's size is the file system's own
		}
	}
	return strings.Join(sortStrings(ls), "\n")
}

func sortStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func names(ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func sha256sumOf(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", path).Output()
	if err != nil {
		t.Fatalf("sha256sum %s: %v", path, err)
	}
	return strings.Fields(string(out))[0]
}

func sha256Go(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
