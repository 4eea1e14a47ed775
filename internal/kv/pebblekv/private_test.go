package pebblekv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/privdir"
)

// withUmask sets the process's umask to mask for the test: what pebble's
// own file system would create with it is open to others.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// TestWhatPebbleWritesIsPrivate opens a store in a directory an older
// service left open (0755, a file 0644 in it), writes, flushes, takes a
// checkpoint and reopens it: nothing under it is open to other users.
func TestWhatPebbleWritesIsPrivate(t *testing.T) {
	withUmask(t, 0o022)
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "OLD"), []byte("an older service's"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, 0)
	ov := kv.NewOverlay(s.Writer())
	ov.Set([]byte("secret/token-key/1"), []byte("32 bytes of a signing key, say.."))
	if err := s.Commit(ov, true); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(filepath.Join(root, "snapshot", "state")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, 0)
	defer s.Close()
	shared, err := privdir.Shared(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range shared {
		t.Errorf("open to others: %s", p)
	}
}
