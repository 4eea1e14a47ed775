package localfs_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
)

// FuzzKeyPath: every key is refused or maps to a path strictly below
// root, and no operation on it, by either way of resolving paths, reads or
// changes anything outside root, although root holds links to outside
// ("L", "a/L") and to itself ("loop").
func FuzzKeyPath(f *testing.F) {
	for _, key := range []string{"a", "L", "L/", "L/secret", "a/L/secret", "L/d/", "L/d/s", "loop/x",
		"../outside/secret", "a/../../outside/secret", "./x", "/etc/passwd", "a//b", "a/./b", "x\x00y",
		".strata-tmp/x", ".strata-tmp/uploads/../../L/secret", "\xff", strings.Repeat("n/", 600) + "x"} {
		f.Add(key)
	}
	y := newYard(f, false)
	walking, err := localfs.New(y.root)
	if err != nil {
		f.Fatal(err)
	}
	localfs.WalkPaths(walking)
	before := tree(f, y.outside)
	f.Fuzz(func(t *testing.T, key string) {
		plantLinks(t, y) // again: a Put at a link's key replaced it
		p, err := localfs.KeyPath(y.s, key)
		if err == nil {
			rel, rerr := filepath.Rel(y.root, p)
			if rerr != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.Clean(p) != p {
				t.Fatalf("key %q maps to %s, not below %s", key, p, y.root)
			}
		}
		for _, s := range []*localfs.Store{y.s, walking} {
			exercise(t, s, key)
		}
		if diff := changes(before, tree(t, y.outside)); len(diff) > 0 {
			t.Fatalf("key %q changed outside root: %q", key, diff)
		}
	})
}

// plantLinks makes root/L and root/a/L links to outside root, and root/loop
// a link to itself, whatever was there.
func plantLinks(t testing.TB, y *yard) {
	for _, l := range []struct{ at, target string }{{"L", y.outside}, {"a/L", y.outside}, {"loop", "loop"}} {
		p := filepath.Join(y.root, filepath.FromSlash(l.at))
		if now, err := os.Readlink(p); err == nil && now == l.target {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		mustMkdir(t, filepath.Dir(p))
		if err := os.Symlink(l.target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// exercise runs every operation of the store on key, failing the test if
// one reads what is outside root.
func exercise(t *testing.T, s *localfs.Store, key string) {
	readsNothingOutside := func(r object.Reader, err error) {
		if err != nil {
			return
		}
		defer r.Close()
		if b, _ := io.ReadAll(r); strings.HasPrefix(string(b), "outside") {
			t.Fatalf("key %q read %q, from outside root", key, b)
		}
	}
	readsNothingOutside(s.Get(ctx, key, 0, -1))
	if info, err := s.Head(ctx, key); err == nil && info.Size == int64(len("outside secret")) {
		t.Fatalf("key %q heads as %+v", key, info)
	}
	_, _ = s.List(ctx, key, "", 0)
	_, _, _, _ = s.ListDirSkips(ctx, key, "", 0)
	_, _ = s.Put(ctx, key, strings.NewReader(""), 0)
	if _, err := s.Copy(ctx, key, "", "copied/"+key); err == nil && !object.IsMarker(key) {
		readsNothingOutside(s.Get(ctx, "copied/"+key, 0, -1))
	}
	if u, err := s.CreateMultipart(ctx, key); err == nil {
		if part, err := s.UploadPart(ctx, u, 1, strings.NewReader("p"), 1); err == nil {
			_, _ = s.CompleteMultipart(ctx, u, []object.Part{part})
		}
		_ = s.AbortMultipart(ctx, u)
	}
	_ = s.Delete(ctx, key)
	_ = s.Delete(ctx, "copied/"+key)
}
