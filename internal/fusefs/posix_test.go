package fusefs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPython runs Python's os, shutil and mmap through a mount
// (testdata/posix.py).
func TestPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("no python3 on PATH")
	}
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	script, err := filepath.Abs("testdata/posix.py")
	if err != nil {
		t.Fatal(err)
	}
	if out := run(t, m.Dir, py, script, m.Dir); strings.TrimSpace(out) != "ok" {
		t.Fatalf("posix.py: %s", out)
	}
}

// TestTwoMounts: two mounts of one namespace (two hosts, as far as each
// knows) see each other's files once closed, even when one of them had
// looked at the file a moment before (its kernel's cached attributes are
// refreshed at open: close-to-open).
func TestTwoMounts(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	a := mount(t, srv.Addr, "default")
	b := mount(t, srv.Addr, "default")
	small, large := []byte("written through a\n"), bytes.Repeat([]byte("b's longer content "), 4)
	if err := os.WriteFile(a.path("f"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b.path("f")); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("b reads %q, %v; want a's %q", got, err, small)
	}
	if err := os.WriteFile(b.path("f"), large, 0o644); err != nil {
		t.Fatal(err)
	}
	// An open's fstat states the length the file has now, though a's
	// kernel was told the old one less than its attribute timeout ago.
	f, err := os.Open(a.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil || fi.Size() != int64(len(large)) {
		t.Fatalf("a's fstat after open: %v, %v; want %d bytes", fi.Size(), err, len(large))
	}
	if got, err := os.ReadFile(a.path("f")); err != nil || !bytes.Equal(got, large) {
		t.Fatalf("a reads %d bytes, %v; want b's %d", len(got), err, len(large))
	}
	if err := os.WriteFile(a.path("f"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b.path("f")); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("b reads %d bytes, %v; want a's %d again", len(got), err, len(small))
	}
	if err := os.Mkdir(a.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(a.path("f"), a.path("d/g")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b.path("d/g")); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("b reads the renamed file: %q, %v", got, err)
	}
}
