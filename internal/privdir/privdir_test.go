package privdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	for perm, shared := range map[fs.FileMode]bool{0o700: false, 0o500: false, 0o755: true, 0o750: true,
		0o711: true, 0o701: true, 0o702: true, 0o770: true} {
		if err := os.Chmod(dir, perm); err != nil {
			t.Fatal(err)
		}
		if err := Check(dir); errors.Is(err, ErrShared) != shared || (!shared && err != nil) {
			t.Errorf("Check of a directory %04o: %v, want shared %v", perm, err, shared)
		}
	}
	if err := Check(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check of a missing directory: %v", err)
	}
}

// TestClose closes a tree that an older service left open, and leaves
// what a symbolic link in it points to alone.
func TestClose(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "state")
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("secret"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := Close(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{dir: 0o700, filepath.Join(dir, "f"): 0o600,
		filepath.Join(dir, "sub"): 0o700, filepath.Join(dir, "sub", "f"): 0o600, outside: 0o644} {
		if got := mode(t, path); got != want {
			t.Errorf("%s: %04o, want %04o", path, got, want)
		}
	}
	fresh := filepath.Join(root, "a", "b")
	if err := MkdirAll(fresh); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(root, "a"), fresh} {
		if got := mode(t, d); got != 0o700 {
			t.Errorf("%s made %04o, want 0700", d, got)
		}
	}
}

func TestShared(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "closed"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("closed", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	open, err := Shared(root)
	if err != nil || len(open) != 1 || open[0] != filepath.Join(root, "open")+" (0644)" {
		t.Fatalf("Shared: %q, %v", open, err)
	}
}
