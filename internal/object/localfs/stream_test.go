package localfs_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/retry"
)

// A streamed Put is invisible until Commit, then the whole body; an aborted
// one stores nothing and leaves no temp file; both through the retry layer
// as servers wrap buckets.
func TestStartPut(t *testing.T) {
	for _, wrap := range []struct {
		name string
		f    func(object.Store) object.Store
	}{
		{"localfs", func(s object.Store) object.Store { return s }},
		{"retry(localfs)", func(s object.Store) object.Store { return retry.New(s, retry.Policy{}) }},
	} {
		t.Run(wrap.name, func(t *testing.T) {
			fs := newStore(t)
			s := wrap.f(fs)
			if !object.Streams(s) {
				t.Fatal("Streams = false")
			}
			ps, ok, err := object.StartPut(ctx, s, "a/b")
			if err != nil || !ok {
				t.Fatalf("StartPut = %v, %v", ok, err)
			}
			for _, p := range []string{"hello ", "world"} {
				if _, err := ps.Write([]byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Head(ctx, "a/b"); !errors.Is(err, object.ErrNotFound) {
				t.Fatalf("Head before Commit = %v, want ErrNotFound", err)
			}
			info, err := ps.Commit(ctx)
			if err != nil || info.Size != 11 {
				t.Fatalf("Commit = %+v, %v", info, err)
			}
			r, err := s.Get(ctx, "a/b", 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || string(got) != "hello world" {
				t.Fatalf("object = %q, %v", got, err)
			}
			ps.Abort() // after Commit: nothing
			if _, err := s.Head(ctx, "a/b"); err != nil {
				t.Fatalf("Head after Abort following Commit: %v", err)
			}
			if _, err := ps.Write([]byte("x")); err == nil {
				t.Fatal("Write after Commit succeeded")
			}

			ps, _, err = object.StartPut(ctx, s, "c")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ps.Write([]byte("lost")); err != nil {
				t.Fatal(err)
			}
			ps.Abort()
			if _, err := s.Head(ctx, "c"); !errors.Is(err, object.ErrNotFound) {
				t.Fatalf("Head after Abort = %v, want ErrNotFound", err)
			}
			if _, err := ps.Commit(ctx); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("Commit after Abort = %v, want os.ErrClosed", err)
			}
			if left := tmpEntries(t, fs); len(left) != 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

// A streamed Put of a marker key, or of a cancelled context, is refused.
func TestStartPutRefused(t *testing.T) {
	s := newStore(t)
	if _, err := s.StartPut(ctx, "dir/"); !errors.Is(err, object.ErrInvalidKey) {
		t.Fatalf("StartPut(marker) = %v, want ErrInvalidKey", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	ps, err := s.StartPut(cctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := ps.Commit(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Commit on a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := s.Head(ctx, "k"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head = %v, want ErrNotFound", err)
	}
	if left := tmpEntries(t, s); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}
