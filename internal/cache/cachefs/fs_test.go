package cachefs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// conformance checks the FS contract the cache relies on.
func conformance(t *testing.T, fsys FS) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "f")
	_, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("open of a missing file: %v", err)
	}
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("world"), 8192); err != nil { // sparse
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := f.ReadAt(buf, 8192); err != nil || string(buf) != "world" {
		t.Fatalf("ReadAt: %q, %v", buf, err)
	}
	if _, err := syscall.Pread(int(f.Fd()), buf, 0); err != nil || string(buf) != "hello" {
		t.Fatalf("pread on Fd: %q, %v", buf, err)
	}
	if f.Name() != name {
		t.Fatalf("Name %q", f.Name())
	}
	if err := f.Allocate(1 << 20); err != nil {
		t.Fatal(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 8197 {
		t.Fatalf("Stat after Allocate (the size must stay): %v, %v", fi, err)
	}
	if err := f.Truncate(8197); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(name, name+"2"); err != nil {
		t.Fatal(err)
	}
	if b, err := fsys.ReadFile(name + "2"); err != nil || len(b) != 8197 || string(b[:5]) != "hello" {
		t.Fatalf("ReadFile: %d bytes, %v", len(b), err)
	}
	names, err := fsys.ReadDirNames(dir)
	if err != nil || !slices.Equal(names, []string{"f2"}) {
		t.Fatalf("ReadDirNames: %v, %v", names, err)
	}
	if err := fsys.Remove(name + "2"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove(name + "2"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Remove: %v", err)
	}
}

func TestOS(t *testing.T)                 { conformance(t, OS()) }
func TestFaultyWithNoFaults(t *testing.T) { conformance(t, NewFaulty(OS())) }

func TestFaultyFailsTheSelectedCalls(t *testing.T) {
	ffs := NewFaulty(OS())
	dir := t.TempDir()
	ffs.Fail(OpWrite, ".data", 2, syscall.ENOSPC)
	f, err := ffs.OpenFile(filepath.Join(dir, "x.data"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ffs.OpenFile(filepath.Join(dir, "x.meta"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.WriteAt([]byte("m"), 0); err != nil {
		t.Fatalf("write to a name the rule does not select: %v", err)
	}
	for i := range 3 {
		_, err := f.WriteAt([]byte("d"), 0)
		if fails := i < 2; fails != errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if ffs.Fired() != 2 {
		t.Fatalf("fired %d", ffs.Fired())
	}
}

func TestFaultyLimitsSpace(t *testing.T) {
	ffs := NewFaulty(OS())
	ffs.LimitSpace(100)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	f, _ := ffs.OpenFile(a, os.O_RDWR|os.O_CREATE, 0o644)
	defer f.Close()
	mustWrite := func(f File, n int, off int64, wantErr bool) {
		t.Helper()
		_, err := f.WriteAt(make([]byte, n), off)
		if wantErr != errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("write of %d at %d with %d used: %v", n, off, ffs.Used(), err)
		}
	}
	mustWrite(f, 60, 0, false)
	mustWrite(f, 60, 0, false) // a rewrite costs nothing
	mustWrite(f, 60, 60, true)
	mustWrite(f, 40, 60, false)
	if err := ffs.Rename(a, b); err != nil || ffs.Used() != 100 {
		t.Fatalf("rename: %v, used %d", err, ffs.Used())
	}
	if err := ffs.Remove(b); err != nil || ffs.Used() != 0 {
		t.Fatalf("remove: %v, used %d", err, ffs.Used())
	}
	g, _ := ffs.OpenFile(a, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	defer g.Close()
	mustWrite(g, 100, 0, false)
	h, _ := ffs.OpenFile(a, os.O_RDWR|os.O_TRUNC, 0o644) // truncation frees
	defer h.Close()
	mustWrite(h, 100, 0, false)
	// An allocation counts whole; a truncate gives back what is past it.
	if err := h.Allocate(50); err != nil || ffs.Used() != 100 {
		t.Fatalf("allocate within what is written: %v, used %d", err, ffs.Used())
	}
	if err := h.Truncate(30); err != nil || ffs.Used() != 30 {
		t.Fatalf("truncate: %v, used %d", err, ffs.Used())
	}
	if err := h.Allocate(101); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("allocate past the limit: %v", err)
	}
	ffs.Clear()
	mustWrite(h, 1000, 100, false)
}
