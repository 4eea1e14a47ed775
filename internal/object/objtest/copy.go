package objtest

import (
	"context"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

var copyTests = []test{
	{"Copy", testCopy},
	{"CopyVersion", testCopyVersion},
}

func copyObject(t testing.TB, s object.Store, src, etag, dst string) object.Info {
	t.Helper()
	info, err := s.Copy(context.Background(), src, etag, dst)
	if err != nil {
		t.Fatalf("Copy(%q, %q, %q): %v", src, etag, dst, err)
	}
	return info
}

func testCopy(t *testing.T, s object.Store) {
	ctx := context.Background()
	data := Data(70, 1<<20+3)
	src := put(t, s, "src", data)
	dst := copyObject(t, s, "src", "", "dir/dst")
	if dst.Key != "dir/dst" || dst.Size != src.Size || dst.ETag == "" || dst.ModTime.IsZero() {
		t.Fatalf("Copy = %+v", dst)
	}
	head, err := s.Head(ctx, "dir/dst")
	if err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "Head of the copy", head, dst)
	wantEqual(t, "the copy", get(t, s, "dir/dst", 0, -1), data)
	if head, err = s.Head(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "Head of the source after a copy", head, src)
	// Over an existing object, twice (idempotent), and of an empty one.
	put(t, s, "dir/dst", Data(71, 10))
	copyObject(t, s, "src", src.ETag, "dir/dst")
	copyObject(t, s, "src", src.ETag, "dir/dst")
	wantEqual(t, "a copy over an object", get(t, s, "dir/dst", 0, -1), data)
	put(t, s, "empty", nil)
	if info := copyObject(t, s, "empty", "", "empty2"); info.Size != 0 {
		t.Fatalf("Copy of an empty object = %+v", info)
	}
	wantEqual(t, "a copy of an empty object", get(t, s, "empty2", 0, -1), nil)
	// Markers copy to markers only.
	put(t, s, "m/", nil)
	copyObject(t, s, "m/", "", "m2/")
	if _, err := s.Head(ctx, "m2/"); err != nil {
		t.Fatalf("Head of a copied marker: %v", err)
	}
	for _, tc := range [][2]string{{"m/", "obj"}, {"src", "dir/"}, {"src", "src"}, {"src", "a//b"}} {
		_, err := s.Copy(ctx, tc[0], "", tc[1])
		wantErr(t, "Copy("+tc[0]+", "+tc[1]+")", err, object.ErrInvalidKey)
	}
	_, err = s.Copy(ctx, "missing", "", "x")
	wantErr(t, "Copy of a missing object", err, object.ErrNotFound)
	headMissing(t, s, "x")
}

// A Copy of a stale version fails and leaves the destination alone.
func testCopyVersion(t *testing.T, s object.Store) {
	ctx := context.Background()
	v1 := put(t, s, "src", Data(72, 1000))
	d2 := Data(73, 2000)
	v2 := put(t, s, "src", d2)
	old := put(t, s, "dst", Data(74, 10))
	_, err := s.Copy(ctx, "src", v1.ETag, "dst")
	wantErr(t, "Copy of a stale version", err, object.ErrChanged)
	head, err := s.Head(ctx, "dst")
	if err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "the destination after a failed Copy", head, old)
	if err := s.Delete(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Copy(ctx, "src", v2.ETag, "dst")
	wantErr(t, "Copy of a deleted version", err, object.ErrChanged)
	wantErr(t, "Copy of a deleted version", err, object.ErrNotFound)
}
