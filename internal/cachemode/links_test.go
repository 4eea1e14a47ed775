package cachemode_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object/localfs"
)

// A cache-mode namespace over a local directory that holds symbolic links
// (ln -s / dir/root_link): no link is a file or a directory, nothing is
// read through one, and nothing outside the directory is copied in, moved
// or deleted, whatever is asked through Strata.

// linkedLake is a lake over a local directory with links in it, and a
// directory outside it that they point to.
type linkedLake struct {
	*lake
	root, outside string
}

func startLinkedLake(t *testing.T, o lakeOptions) *linkedLake {
	t.Helper()
	l := &linkedLake{lake: startLake(t, "localfs", o), outside: t.TempDir()}
	l.root = l.bucket.(*localfs.Store).Root()
	writeFile(t, filepath.Join(l.outside, "secret"), "outside secret")
	writeFile(t, filepath.Join(l.outside, "d", "s"), "outside s")
	l.put(t, "sub/a.txt", []byte("inside a"))
	for at, target := range map[string]string{
		"dir_link":       l.outside,
		"file_link":      filepath.Join(l.outside, "secret"),
		"host_link":      "/",
		"dangling":       filepath.Join(l.outside, "nothing"),
		"loop_a":         "loop_b",
		"loop_b":         "loop_a",
		"sub/inner_link": l.outside,
	} {
		if err := os.Symlink(target, filepath.Join(l.root, filepath.FromSlash(at))); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// throughLinks are paths of the lake that lead through a link or are one.
var throughLinks = []string{"/dir_link/secret", "/dir_link/d/s", "/file_link", "/host_link/etc/hostname",
	"/host_link/etc/passwd", "/sub/inner_link/secret", "/dangling", "/loop_a", "/loop_a/x", "/loop_b/loop_a/x"}

func TestLinksAreNoFiles(t *testing.T) {
	l := startLinkedLake(t, lakeOptions{interval: 0})
	ctx := context.Background()
	for _, p := range throughLinks {
		if b, err := l.c.ReadFile(ctx, "strata://lake"+p); !errors.Is(err, fserr.ErrNotFound) {
			t.Errorf("read %s: %q, %v; want not found", p, b, err)
		}
		if st, err := l.c.Stat(ctx, "strata://lake"+p); !errors.Is(err, fserr.ErrNotFound) {
			t.Errorf("stat %s: %+v, %v; want not found", p, st, err)
		}
	}
	if got := l.names(t, "/"); !slices.Equal(got, []string{"sub/"}) {
		t.Errorf("root lists %q", got)
	}
	if got := l.names(t, "/sub"); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("/sub lists %q", got)
	}
	for _, p := range []string{"/dir_link", "/host_link", "/host_link/etc", "/loop_a", "/sub/inner_link/d"} {
		if list, err := l.c.ReadDir(ctx, "strata://lake"+p); !errors.Is(err, fserr.ErrNotFound) {
			t.Errorf("list %s: %d entries, %v; want not found", p, len(list), err)
		}
	}
}

// A rename of a link, or of a path through one, finds nothing to move; a
// directory holding a link moves its files, and never what the link
// points to. Nothing outside changes; nothing of it is copied in.
func TestRenamesLeaveLinksAlone(t *testing.T) {
	l := startLinkedLake(t, lakeOptions{interval: 0})
	ctx := context.Background()
	outside := snapshot(t, l.outside)
	for _, p := range []string{"/dir_link", "/dir_link/d", "/file_link", "/loop_a", "/sub/inner_link"} {
		if _, err := l.c.Rename(ctx, "strata://lake"+p, "strata://lake/stolen"); !errors.Is(err, fserr.ErrNotFound) {
			t.Errorf("rename %s: %v; want not found", p, err)
		}
	}
	if _, err := l.c.Rename(ctx, "strata://lake/sub", "strata://lake/moved"); err != nil {
		t.Fatal(err)
	}
	if got := l.names(t, "/moved"); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("the moved directory holds %q", got)
	}
	if got := string(l.read(t, "/moved/a.txt")); got != "inside a" {
		t.Errorf("moved/a.txt reads %q", got)
	}
	// The link stays where it was, and so does its directory, which
	// Strata shows as an empty one wherever it is listed.
	if got := l.names(t, "/"); !slices.Equal(got, []string{"moved/", "sub/"}) {
		t.Errorf("root lists %q", got)
	}
	if got := l.names(t, "/sub"); len(got) != 0 {
		t.Errorf("/sub, which holds only a link, lists %q", got)
	}
	if deleted, err := l.c.Delete(ctx, "strata://lake/dir_link", true); deleted || err != nil {
		t.Errorf("delete of a link: %v, %v; want nothing deleted", deleted, err)
	}
	if got := snapshot(t, l.outside); !maps(outside, got) {
		t.Errorf("outside the bucket, %q became %q", outside, got)
	}
	var in []string
	_ = filepath.WalkDir(l.root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() && !strings.Contains(p, ".strata-tmp") {
			in = append(in, strings.TrimPrefix(p, l.root+"/"))
		}
		return err
	})
	if !slices.Equal(in, []string{"moved/a.txt"}) {
		t.Errorf("the bucket holds the files %q, want moved/a.txt alone", in)
	}
}

// What a listing leaves out is logged, with how many, once: not again at
// every listing of the directory, but again when it changes.
func TestSkippedEntriesLoggedOnce(t *testing.T) {
	logs := &records{}
	l := startLinkedLake(t, lakeOptions{interval: 0, log: slog.New(logs)})
	writeFile(t, filepath.Join(l.root, "bad\xffname"), "no key is not UTF-8")
	for range 3 {
		l.names(t, "/")
	}
	want := `entries=7 examples="bad\xffname" (not UTF-8), "dangling" (a symbolic link)`
	if got := logs.matching("cannot be files"); len(got) != 1 || !strings.Contains(got[0], want) {
		t.Fatalf("logged %q; want one record with %s", got, want)
	}
	if err := os.Symlink("sub", filepath.Join(l.root, "another_link")); err != nil {
		t.Fatal(err)
	}
	l.names(t, "/")
	l.names(t, "/")
	if got := logs.matching("cannot be files"); len(got) != 2 || !strings.Contains(got[1], "entries=8") {
		t.Fatalf("logged %q; want a second record, of 8", got)
	}
}

// records is a slog.Handler that keeps what is logged, as text.
type records struct {
	mu   sync.Mutex
	text []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }

func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.text = append(r.text, b.String())
	return nil
}

func (r *records) matching(s string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, t := range r.text {
		if strings.Contains(t, s) {
			out = append(out, t)
		}
	}
	return out
}

// snapshot maps each path under dir to its content ("dir" for a directory).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		content := "dir"
		if !e.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			content = string(b)
		}
		out[strings.TrimPrefix(p, dir)] = content
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
