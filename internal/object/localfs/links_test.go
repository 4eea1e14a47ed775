package localfs_test

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/objtest"
)

// Symbolic links that other programs put in the directory are never
// followed, wherever they are in a key's path: no byte outside root is read
// through one, and nothing outside root (nor, through a link to a directory
// inside root, anywhere but at the key's own path) is written, renamed or
// removed. Every case runs with openat2 and with the walk that replaces it
// where the kernel has none.

// yard is a store's root beside a directory outside it, in one test
// directory, with a file and a directory in each.
type yard struct {
	base, root, outside string
	s                   *localfs.Store
}

func newYard(t testing.TB, walk bool) *yard {
	t.Helper()
	y := makeYard(t)
	y.open(t, walk)
	return y
}

// makeYard makes a yard's directories and files, and no store yet.
func makeYard(t testing.TB) *yard {
	t.Helper()
	base := t.TempDir()
	y := &yard{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	mustFile(t, filepath.Join(y.outside, "secret"), "outside secret")
	mustFile(t, filepath.Join(y.outside, "d", "s"), "outside s")
	mustFile(t, filepath.Join(y.root, "in", "x"), "inside x")
	mustFile(t, filepath.Join(y.root, "in", "d", "y"), "inside y")
	mustMkdir(t, filepath.Join(y.root, "a"))
	return y
}

// open opens the yard's store, resolving paths with openat2 or by a walk.
func (y *yard) open(t testing.TB, walk bool) {
	t.Helper()
	s, err := localfs.New(y.root)
	if err != nil {
		t.Fatal(err)
	}
	if walk {
		localfs.WalkPaths(s)
	}
	y.s = s
}

// link is a kind of symbolic link, by where it points.
type link struct {
	name   string
	target func(y *yard, at string) string
}

var links = []link{
	{"to a directory outside", func(y *yard, _ string) string { return y.outside }},
	{"to a directory inside", func(y *yard, _ string) string { return filepath.Join(y.root, "in") }},
	{"to a file outside", func(y *yard, _ string) string { return filepath.Join(y.outside, "secret") }},
	{"to a file inside", func(y *yard, _ string) string { return filepath.Join(y.root, "in", "x") }},
	{"dangling", func(y *yard, _ string) string { return filepath.Join(y.outside, "nothing") }},
	{"to itself", func(_ *yard, at string) string { return filepath.Base(at) }},
	{"to the host's root", func(*yard, string) string { return "/" }},
}

// walks names the two ways paths are resolved.
var walks = map[string]bool{"openat2": false, "walk": true}

// eachLink runs fn for every kind of link, planted as the key prefix's
// first component ("L") and as a deeper one ("a/L"), both ways.
func eachLink(t *testing.T, fn func(t *testing.T, y *yard, p string)) {
	for mode, walk := range walks {
		for _, l := range links {
			for _, dir := range []string{"", "a/"} {
				t.Run(mode+"/"+l.name+"/"+dir+"L", func(t *testing.T) {
					y := newYard(t, walk)
					at := filepath.Join(y.root, filepath.FromSlash(dir+"L"))
					if err := os.Symlink(l.target(y, at), at); err != nil {
						t.Fatal(err)
					}
					fn(t, y, dir+"L")
				})
			}
		}
	}
}

// below are the keys through a link at p, to what the link's targets hold.
func below(p string) []string {
	return []string{p + "/secret", p + "/x", p + "/d/s", p + "/d/y", p + "/d/", p + "/etc/hostname",
		p + "/L/secret", p + "/new", p + "/new/"}
}

func TestLinksReadAsNothing(t *testing.T) {
	eachLink(t, func(t *testing.T, y *yard, p string) {
		for _, key := range append(below(p), p, p+"/") {
			if info, err := y.s.Head(ctx, key); !errors.Is(err, object.ErrNotFound) {
				t.Errorf("Head(%s) = %+v, %v; want ErrNotFound", key, info, err)
			}
			if r, err := y.s.Get(ctx, key, 0, -1); !errors.Is(err, object.ErrNotFound) {
				t.Errorf("Get(%s): %v; want ErrNotFound", key, err)
				if err == nil {
					b, _ := io.ReadAll(r)
					t.Errorf("Get(%s) read %q", key, b)
					r.Close()
				}
			}
			if _, err := y.s.GetVersion(ctx, key, "0123456789abcdef", 0, -1); !errors.Is(err, object.ErrChanged) {
				t.Errorf("GetVersion(%s): %v; want ErrChanged", key, err)
			}
		}
	})
}

func TestLinksListAsNothing(t *testing.T) {
	eachLink(t, func(t *testing.T, y *yard, p string) {
		want := []string{"a/", "in/", "in/d/", "in/d/y", "in/x"}
		if got := infoKeys(list(t, y.s, "")); !slices.Equal(got, want) {
			t.Errorf("List = %q, want %q", got, want)
		}
		for _, prefix := range []string{p, p + "/", p + "/d/", p + "/L/"} {
			if got := list(t, y.s, prefix); len(got) != 0 {
				t.Errorf("List(%s) = %q", prefix, infoKeys(got))
			}
			entries, skipped, _, err := y.s.ListDirSkips(ctx, prefix, "", 0)
			if err != nil || (prefix != p && (len(entries) != 0 || len(skipped) != 0)) {
				t.Errorf("ListDirSkips(%s) = %+v, %+v, %v", prefix, entries, skipped, err)
			}
		}
		dir := p[:len(p)-1]
		entries, skipped, _, err := y.s.ListDirSkips(ctx, dir, "", 0)
		wantEntries := map[string][]string{"": {"a/", "in/"}, "a/": nil}[dir]
		if err != nil || !slices.Equal(entryKeys(entries), wantEntries) ||
			!slices.Equal(skipped, []object.Skipped{{Key: p, Why: "a symbolic link"}}) {
			t.Errorf("ListDirSkips(%q) = %q, %+v, %v; want %q and the link skipped", dir, entryKeys(entries), skipped, err, wantEntries)
		}
	})
}

// Writes and deletes through a link fail or do nothing, and change nothing
// anywhere.
func TestLinksTakeNoWrites(t *testing.T) {
	eachLink(t, func(t *testing.T, y *yard, p string) {
		before := tree(t, y.base)
		for _, key := range below(p) {
			data := "x"
			if object.IsMarker(key) {
				data = ""
			}
			if _, err := y.s.Put(ctx, key, strings.NewReader(data), int64(len(data))); err == nil {
				t.Errorf("Put(%s) through a link succeeded", key)
			}
			if err := y.s.Delete(ctx, key); err != nil {
				t.Errorf("Delete(%s): %v; want nothing to delete", key, err)
			}
		}
		if _, err := y.s.Copy(ctx, "in/x", "", p+"/copied"); err == nil {
			t.Errorf("Copy to %s/copied succeeded", p)
		}
		if _, err := y.s.Copy(ctx, p+"/secret", "", "stolen"); !errors.Is(err, object.ErrNotFound) {
			t.Errorf("Copy from %s/secret: %v; want ErrNotFound", p, err)
		}
		if _, err := y.s.Copy(ctx, p+"/d/", "", "stolen/"); !errors.Is(err, object.ErrNotFound) {
			t.Errorf("Copy of the marker %s/d/: %v; want ErrNotFound", p, err)
		}
		multipartTo(t, y.s, p+"/uploaded")
		for _, key := range []string{p, p + "/"} { // the link itself is no object
			if err := y.s.Delete(ctx, key); err != nil {
				t.Errorf("Delete(%s): %v", key, err)
			}
		}
		if _, err := y.s.Put(ctx, p+"/", nil, 0); err == nil {
			t.Errorf("a marker Put(%s/) over a link succeeded", p)
		}
		if diff := changes(before, tree(t, y.base)); len(diff) > 0 {
			t.Errorf("changed: %q", diff)
		}
	})
}

// A Put at the link's own key replaces the link, in root, with the object;
// what the link pointed to stays as it was.
func TestPutOverALinkReplacesIt(t *testing.T) {
	eachLink(t, func(t *testing.T, y *yard, p string) {
		before := tree(t, y.base)
		if _, err := y.s.Put(ctx, p, strings.NewReader("new"), 3); err != nil {
			t.Fatal(err)
		}
		if got := read(t, y.s, p); got != "new" {
			t.Errorf("read back %q", got)
		}
		after := tree(t, y.base)
		if diff := changes(before, after); !slices.Equal(diff, []string{"root/" + p}) {
			t.Errorf("changed: %q; want root/%s only", diff, p)
		}
	})
}

// multipartTo uploads an object to key, through a link: the upload may
// start, but it completes nowhere.
func multipartTo(t *testing.T, s *localfs.Store, key string) {
	t.Helper()
	u, err := s.CreateMultipart(ctx, key)
	if err != nil {
		return
	}
	part, err := s.UploadPart(ctx, u, 1, strings.NewReader("part"), 4)
	if err != nil {
		t.Fatalf("UploadPart: %v", err)
	}
	if _, err := s.CompleteMultipart(ctx, u, []object.Part{part}); err == nil {
		t.Errorf("CompleteMultipart to %s succeeded", key)
	}
	if err := s.AbortMultipart(ctx, u); err != nil {
		t.Errorf("AbortMultipart: %v", err)
	}
}

// A link where the store keeps its temp files (.strata-tmp, or its
// uploads) makes writes fail; neither New nor a write, abort or listing of
// uploads touches what it points to, stale files and an upload's lookalike
// included.
func TestLinkedTempDirectory(t *testing.T) {
	for mode, walk := range walks {
		for _, at := range []string{".strata-tmp", ".strata-tmp/uploads"} {
			t.Run(mode+"/"+at, func(t *testing.T) {
				y := makeYard(t)
				id := "00112233445566778899aabbccddeeff"
				mustFile(t, filepath.Join(y.outside, id, "key"), "k")
				old := time.Now().Add(-2 * time.Hour)
				for _, p := range []string{filepath.Join(y.outside, "secret"), filepath.Join(y.outside, "d")} {
					if err := os.Chtimes(p, old, old); err != nil {
						t.Fatal(err)
					}
				}
				if at != ".strata-tmp" {
					mustMkdir(t, filepath.Join(y.root, ".strata-tmp"))
				}
				if err := os.Symlink(y.outside, filepath.Join(y.root, filepath.FromSlash(at))); err != nil {
					t.Fatal(err)
				}
				before := tree(t, y.outside)
				y.open(t, walk) // removes stale temp files
				s := y.s
				if at == ".strata-tmp" {
					if _, err := s.Put(ctx, "k", strings.NewReader("x"), 1); err == nil {
						t.Error("Put with .strata-tmp a link succeeded")
					}
				}
				if _, err := s.CreateMultipart(ctx, "k"); err == nil {
					t.Error("CreateMultipart with the uploads a link succeeded")
				}
				if ups, err := s.ListUploads(ctx, ""); len(ups) != 0 {
					t.Errorf("ListUploads = %+v, %v", ups, err)
				}
				u := object.Upload{Key: "k", ID: id}
				_ = s.AbortMultipart(ctx, u)
				if _, err := s.UploadPart(ctx, u, 1, strings.NewReader("x"), 1); err == nil {
					t.Error("UploadPart to an upload outside succeeded")
				}
				if diff := changes(before, tree(t, y.outside)); len(diff) > 0 {
					t.Errorf("changed outside: %q", diff)
				}
			})
		}
	}
}

// Opening a store, and reading and listing it, writes nothing into its
// directory: no .strata-tmp until the first write.
func TestReadsWriteNothing(t *testing.T) {
	for mode, walk := range walks {
		t.Run(mode, func(t *testing.T) {
			y := newYard(t, walk)
			before := tree(t, y.base)
			s, err := localfs.New(y.root)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = s.Head(ctx, "in/x")
			_, _ = s.Head(ctx, "nothing")
			_ = read(t, s, "in/x")
			_ = list(t, s, "")
			if _, _, err := s.ListDir(ctx, "in/", "", 0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ListUploads(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "nothing"); err != nil {
				t.Fatal(err)
			}
			if diff := changes(before, tree(t, y.base)); len(diff) > 0 {
				t.Errorf("changed: %q", diff)
			}
			if _, err := os.Lstat(filepath.Join(y.root, ".strata-tmp")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a temp directory before any write: %v", err)
			}
			if _, err := s.Put(ctx, "k", strings.NewReader("x"), 1); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(y.root, ".strata-tmp")); err != nil {
				t.Errorf("no temp directory after a Put: %v", err)
			}
		})
	}
}

// Entries no key can name are left out of listings, and ListDirSkips says
// which, each once over the pages of a listing.
func TestSkippedEntries(t *testing.T) {
	s := newStore(t)
	root := s.Root()
	mustFile(t, filepath.Join(root, "d", "ok1"), "")
	mustFile(t, filepath.Join(root, "d", "ok2"), "")
	mustFile(t, filepath.Join(root, "d", "ok3"), "")
	mustFile(t, filepath.Join(root, "d", "bad\xffname"), "")
	long := strings.Repeat("n", 250)
	deep := filepath.Join(root, "d", long, long, long, long, long)
	mustFile(t, filepath.Join(deep, "f"), "")
	if err := os.Symlink("ok1", filepath.Join(root, "d", "ok1-link")); err != nil {
		t.Fatal(err)
	}
	want := []object.Skipped{{Key: "d/bad\xffname", Why: "not UTF-8"}, {Key: "d/ok1-link", Why: "a symbolic link"}}
	var got []object.Skipped
	var keys []string
	for token := ""; ; {
		entries, skipped, next, err := s.ListDirSkips(ctx, "d/", token, 1)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, entryKeys(entries)...)
		got = append(got, skipped...)
		if next == "" {
			break
		}
		token = next
	}
	if wantKeys := []string{"d/" + long + "/", "d/ok1", "d/ok2", "d/ok3"}; !slices.Equal(keys, wantKeys) {
		t.Errorf("keys %q, want %q", keys, wantKeys)
	}
	if !slices.Equal(got, want) {
		t.Errorf("skipped %+v, want %+v", got, want)
	}
	dir := "d/" + strings.Repeat(long+"/", 4)
	_, skipped, _, err := s.ListDirSkips(ctx, dir, "", 0)
	if want := []object.Skipped{{Key: dir + long + "/", Why: "longer than the longest key, 1,024 bytes"}}; err != nil || !slices.Equal(skipped, want) {
		t.Errorf("ListDirSkips(%s...) skipped %+v, %v", dir[:10], skipped, err)
	}
}

// The whole contract holds when paths are walked, as where there is no openat2.
func TestConformanceWalking(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store {
		s := newStore(t)
		localfs.WalkPaths(s)
		return s
	})
}

func list(t *testing.T, s *localfs.Store, prefix string) []object.Info {
	t.Helper()
	infos, err := s.List(ctx, prefix, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

func read(t *testing.T, s *localfs.Store, key string) string {
	t.Helper()
	r, err := s.Get(ctx, key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entryKeys(entries []object.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Key)
	}
	return out
}

// tree describes everything under dir, following no link: each path's
// type and mode, a file's content and time, a link's target.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := e.Info()
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + fi.ModTime().String() + " " + string(b)
		}
		out[filepath.ToSlash(rel)] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changes lists the paths that differ between two trees, but for the
// store's temp files.
func changes(before, after map[string]string) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if after[p] != before[p] {
			out = append(out, p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.DeleteFunc(slices.Compact(out), func(p string) bool { return strings.Contains(p, ".strata-tmp") })
}

// mustFile writes a file, making its directory first.
func mustFile(t testing.TB, path, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	mustWrite(t, path, content)
}
