package cachemode_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
)

// gate pauses the namespace service's Delete of one key, once it is done,
// until the test lets it go: a mutation caught between its bucket side and
// its apply.
type gate struct {
	object.Store
	key     string
	reached chan struct{} // closed when the Delete of key is done
	release chan struct{} // closed by the test to let it return
	once    sync.Once
}

func newGate(key string) *gate {
	return &gate{key: key, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) wrap(s object.Store) object.Store {
	g.Store = s
	return g
}

// gatedLake starts a lake, sync interval 0, whose service's Delete of key
// pauses once done.
func gatedLake(t *testing.T, backend, key string) (*lake, *gate) {
	g := newGate(key)
	return startLake(t, backend, lakeOptions{interval: 0, wrapService: g.wrap}), g
}

// paused starts mutate and returns once it is paused at the gate; mutate's
// error comes once the test closes g.release.
func (g *gate) paused(mutate func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- mutate() }()
	<-g.reached
	return done
}

// deleted deletes path and fails if the delete answered false.
func (l *lake) deleted(ctx context.Context, path string, recursive bool) error {
	ok, err := l.c.Delete(ctx, "strata://lake"+path, recursive)
	if err == nil && !ok {
		err = errors.New("delete " + path + " answered false")
	}
	return err
}

func (g *gate) Delete(ctx context.Context, key string) error {
	err := g.Store.Delete(ctx, key)
	if key == g.key {
		g.once.Do(func() {
			close(g.reached)
			<-g.release
		})
	}
	return err
}

// A stat or listing, which with sync interval 0 asks the bucket, of a
// directory whose delete has removed its objects but is not applied yet
// answers what the state holds, and the delete then finds the directory
// and says so. (The stat used to find the marker gone and remove the
// entry first, and the delete answered false: Hadoop's root-directory
// contract test saw it, a listing's prefetch racing the delete.)
func TestSyncLeavesADeleteUnderWayAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l, g := gatedLake(t, backend, "d/")
		ctx := context.Background()
		if _, err := l.c.Mkdirs(ctx, "strata://lake/d", 0o755); err != nil {
			t.Fatal(err)
		}
		done := g.paused(func() error { return l.deleted(ctx, "/d", true) })
		if _, err := l.bucket.Head(ctx, "d/"); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("the marker is still in the bucket: %v", err)
		}
		if st, err := l.c.Stat(ctx, "strata://lake/d"); err != nil || !st.IsDir {
			t.Fatalf("stat of the directory being deleted: %+v %v", st, err)
		}
		if got := l.names(t, "/"); !slices.Equal(got, []string{"d/"}) {
			t.Fatalf("root while deleting: %q", got)
		}
		close(g.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := l.c.Stat(ctx, "strata://lake/d"); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("stat after the delete: %v", err)
		}
		if got := l.names(t, "/"); len(got) != 0 {
			t.Fatalf("root after the delete: %q", got)
		}
	})
}

// Likewise a rename: a stat of its source between the copy's delete of
// the source object and the rename's apply sees the file where it was,
// one of the destination sees nothing yet, and the rename then moves it.
func TestSyncLeavesARenameUnderWayAlone(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l, g := gatedLake(t, backend, "d/a")
		ctx := context.Background()
		l.put(t, "d/a", []byte("a"))
		done := g.paused(func() error {
			_, err := l.c.Rename(ctx, "strata://lake/d/a", "strata://lake/d/b")
			return err
		})
		if st, err := l.c.Stat(ctx, "strata://lake/d/a"); err != nil || st.Length != 1 {
			t.Fatalf("stat of the source: %+v %v", st, err)
		}
		if _, err := l.c.Stat(ctx, "strata://lake/d/b"); !errors.Is(err, fserr.ErrNotFound) {
			t.Fatalf("stat of the destination: %v", err)
		}
		close(g.release)
		if err := <-done; err != nil {
			t.Fatalf("rename: %v", err)
		}
		if got := l.names(t, "/d"); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("after the rename: %q", got)
		}
		if got := l.read(t, "/d/b"); string(got) != "a" {
			t.Fatalf("read back %q", got)
		}
	})
}

// The directories above a delete under way stay what they were, in the
// bucket too: its parent's marker is put first, so that an implied prefix
// whose only object is being deleted does not vanish and a stat of it
// does not drop it, and the file's delete. A listing further up is not
// held: it still asks the bucket.
func TestDeleteUnderWayKeepsItsParents(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		l, g := gatedLake(t, backend, "p/q/f")
		ctx := context.Background()
		l.put(t, "p/q/f", []byte("f")) // p/ and p/q/ are implied prefixes
		if got := l.names(t, "/p/q"); !slices.Equal(got, []string{"f"}) {
			t.Fatalf("p/q: %q", got)
		}
		done := g.paused(func() error { return l.deleted(ctx, "/p/q/f", false) })
		for _, dir := range []string{"/p", "/p/q"} {
			if st, err := l.c.Stat(ctx, "strata://lake"+dir); err != nil || !st.IsDir {
				t.Fatalf("stat of %s while its file is deleted: %+v %v", dir, st, err)
			}
		}
		l.put(t, "other", []byte("o"))
		if got := l.names(t, "/"); !slices.Equal(got, []string{"other", "p/"}) {
			t.Fatalf("root while deleting: %q", got)
		}
		close(g.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := l.names(t, "/p/q"); len(got) != 0 {
			t.Fatalf("p/q after the delete: %q", got)
		}
		if _, err := l.bucket.Head(ctx, "p/q/"); err != nil {
			t.Fatalf("p/q/ has no marker after its last file went: %v", err)
		}
	})
}
