package localfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/objtest"
)

var ctx = context.Background()

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

// tmpEntries lists what is in the temp directory besides the uploads.
func tmpEntries(t *testing.T, s *localfs.Store) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{".strata-tmp", ".strata-tmp/uploads"} {
		entries, err := os.ReadDir(filepath.Join(s.Root(), dir))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			if dir != ".strata-tmp" || e.Name() != "uploads" {
				out = append(out, dir+"/"+e.Name())
			}
		}
	}
	return out
}

func TestLayout(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(ctx, "a/b/c", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(s.Root(), "a", "b", "c"))
	if err != nil || string(got) != "hello" {
		t.Fatalf("file a/b/c = %q, %v", got, err)
	}
	if _, err := s.Put(ctx, "m/", nil, 0); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(s.Root(), "m")); err != nil || !fi.IsDir() {
		t.Fatalf("the marker m/ is no directory: %v", err)
	}
	if left := tmpEntries(t, s); len(left) != 0 {
		t.Fatalf("temp files left behind: %q", left)
	}
	if err := s.Delete(ctx, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Delete left the empty directory a that Put made: %v", err)
	}
}

func TestReservedKey(t *testing.T) {
	s := newStore(t)
	for _, key := range []string{".strata-tmp/x", ".strata-tmp/", ".strata-tmp/uploads/x"} {
		_, err := s.Put(ctx, key, nil, 0)
		if !errors.Is(err, object.ErrInvalidKey) {
			t.Fatalf("Put(%q): %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := s.CreateMultipart(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if entries, _, err := s.ListDir(ctx, "", "", 0); err != nil || len(entries) != 0 {
		t.Fatalf("ListDir of a store with only an upload = %+v, %v", entries, err)
	}
	if infos, err := s.List(ctx, "", "", 0); err != nil || len(infos) != 0 {
		t.Fatalf("List of a store with only an upload = %+v, %v", infos, err)
	}
}

// A key whose parent is an object cannot be stored here (S3 can): the Put
// fails cleanly instead of corrupting either.
func TestFileDirConflict(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(ctx, "a", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a/b", "a/"} {
		if _, err := s.Put(ctx, key, nil, 0); err == nil {
			t.Fatalf("Put(%s) over the object a succeeded", key)
		}
		if _, err := s.Head(ctx, key); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("Head(%s) = %v, want ErrNotFound", key, err)
		}
	}
}

// Files and directories that other programs make are objects and markers;
// a directory made elsewhere stays when its last file is deleted here.
func TestOtherTools(t *testing.T) {
	s := newStore(t)
	root := s.Root()
	mustMkdir(t, filepath.Join(root, "ext", "empty"))
	mustMkdir(t, filepath.Join(root, "ext", "sub"))
	mustWrite(t, filepath.Join(root, "ext", "f1"), "one")
	mustWrite(t, filepath.Join(root, "ext", "sub", "g"), "gee")
	if err := os.Symlink("f1", filepath.Join(root, "ext", "link")); err != nil {
		t.Fatal(err)
	}
	infos, err := s.List(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := infoKeys(infos); !slices.Equal(got, []string{"ext/", "ext/empty/", "ext/f1", "ext/sub/", "ext/sub/g"}) {
		t.Fatalf("List = %q", got)
	}
	entries, _, err := s.ListDir(ctx, "ext/", "", 0)
	if err != nil || len(entries) != 3 || entries[1].Key != "ext/f1" || entries[1].Size != 3 || entries[1].ETag == "" {
		t.Fatalf("ListDir(ext/) = %+v, %v", entries, err)
	}
	head, err := s.Head(ctx, "ext/f1")
	if err != nil || head.ETag != entries[1].ETag {
		t.Fatalf("Head(ext/f1) = %+v, %v; ListDir said %+v", head, err, entries[1])
	}
	if _, err := s.Head(ctx, "ext/link"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head of a symbolic link: %v", err)
	}
	if err := s.Delete(ctx, "ext/sub/g"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "ext/sub/"); err != nil {
		t.Fatalf("a directory made by another program vanished with its last file: %v", err)
	}
	// Rewritten in place by another program: a new version.
	mustWrite(t, filepath.Join(root, "ext", "f1"), "three")
	if now, err := s.Head(ctx, "ext/f1"); err != nil || now.ETag == head.ETag {
		t.Fatalf("Head after an in-place rewrite = %+v, %v; ETag was %q", now, err, head.ETag)
	}
	if _, err := s.GetVersion(ctx, "ext/f1", head.ETag, 0, -1); !errors.Is(err, object.ErrChanged) {
		t.Fatalf("GetVersion of the version rewritten in place: %v", err)
	}
}

// A file rewritten in place during a read ends the read with ErrChanged, not
// io.EOF: the descriptor read from sees the new bytes.
func TestRewriteInPlaceDuringRead(t *testing.T) {
	s := newStore(t)
	data := objtest.Data(1, 100000)
	if _, err := s.Put(ctx, "f", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Get(ctx, "f", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadFull(rc, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Root(), "f"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, object.ErrChanged) {
		t.Fatalf("read of a file rewritten in place: %v, want ErrChanged", err)
	}
}

// Pages of a directory larger than one read of its entries.
func TestListDirLargeDirectory(t *testing.T) {
	s := newStore(t)
	dir := filepath.Join(s.Root(), "big")
	mustMkdir(t, dir)
	var want []string
	for i := range 9000 {
		name := fmt.Sprintf("%05d", i)
		if i%1000 == 0 {
			mustMkdir(t, filepath.Join(dir, name))
			want = append(want, "big/"+name+"/")
			continue
		}
		mustWrite(t, filepath.Join(dir, name), "")
		want = append(want, "big/"+name)
	}
	var got []string
	token := ""
	for {
		entries, next, err := s.ListDir(ctx, "big/", token, 700)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			got = append(got, e.Key)
		}
		if next == "" {
			break
		}
		token = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged ListDir of 9000 entries: %d entries, first difference at %d", len(got), firstDiff(got, want))
	}
}

// Upload ids from callers never lead outside the uploads.
func TestUploadIDs(t *testing.T) {
	s := newStore(t)
	for _, id := range []string{"", "../../x", "..", "zz"} {
		u := object.Upload{Key: "k", ID: id}
		if _, err := s.UploadPart(ctx, u, 1, strings.NewReader("x"), 1); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("UploadPart to upload %q: %v", id, err)
		}
		if err := s.AbortMultipart(ctx, u); err != nil {
			t.Fatalf("AbortMultipart of upload %q: %v", id, err)
		}
	}
	u, err := s.CreateMultipart(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	other := object.Upload{Key: "other", ID: u.ID} // the id of another key's upload
	if _, err := s.UploadPart(ctx, other, 1, strings.NewReader("x"), 1); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("UploadPart under another key: %v", err)
	}
	p, err := s.UploadPart(ctx, u, 1, strings.NewReader("x"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompleteMultipart(ctx, u, []object.Part{p}); err != nil {
		t.Fatal(err)
	}
	if left := tmpEntries(t, s); len(left) != 0 {
		t.Fatalf("temp files left behind: %q", left)
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func infoKeys(infos []object.Info) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.Key)
	}
	return out
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkStore(b *testing.B) { objtest.Bench(b, newStore(b)) }
