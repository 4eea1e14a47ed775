package localfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/objtest"
)

func newStore(t testing.TB) *localfs.Store {
	s, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store { return newStore(t) })
}

func TestLayout(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if err := s.Put(ctx, "a/b/c", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(s.Root(), "a", "b", "c"))
	if err != nil || string(got) != "hello" {
		t.Fatalf("file a/b/c = %q, %v", got, err)
	}
	tmps, _ := os.ReadDir(filepath.Join(s.Root(), ".strata-tmp"))
	if len(tmps) != 0 {
		t.Fatalf("temp files left behind: %v", tmps)
	}
	if err := s.Delete(ctx, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Delete left the empty directory a: %v", err)
	}
}

func TestReservedKey(t *testing.T) {
	s := newStore(t)
	err := s.Put(context.Background(), ".strata-tmp/x", strings.NewReader("x"), 1)
	if !errors.Is(err, object.ErrInvalidKey) {
		t.Fatalf("Put into the temp dir: %v, want ErrInvalidKey", err)
	}
}

// A key whose parent is an object cannot be stored here (S3 can): the Put
// fails cleanly instead of corrupting either.
func TestFileDirConflict(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if err := s.Put(ctx, "a", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a/b", strings.NewReader("y"), 1); err == nil {
		t.Fatal("Put(a/b) over the object a succeeded")
	}
	if _, err := s.Head(ctx, "a/b"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head(a/b) = %v, want ErrNotFound", err)
	}
}

func BenchmarkStore(b *testing.B) { objtest.Bench(b, newStore(b)) }
