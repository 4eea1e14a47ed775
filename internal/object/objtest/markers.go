package objtest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

var markerTests = []test{
	{"Marker", testMarker},
	{"MarkerDelete", testMarkerDelete},
	{"ImpliedPrefix", testImpliedPrefix},
}

// hasPrefixEntry reports whether ListDir(parent) shows the common prefix dir.
func hasPrefixEntry(t testing.TB, s object.Store, parent, dir string) bool {
	t.Helper()
	entries, _ := listDir(t, s, parent, "", 0)
	return slices.Contains(entryNames(entries), dir+" (p)")
}

// headMissing fails t unless key has no object.
func headMissing(t testing.TB, s object.Store, key string) {
	t.Helper()
	_, err := s.Head(context.Background(), key)
	wantErr(t, "Head("+key+")", err, object.ErrNotFound)
}

// A marker is a zero-length object whose key ends in "/".
func testMarker(t *testing.T, s object.Store) {
	ctx := context.Background()
	m := put(t, s, "m/", nil)
	head, err := s.Head(ctx, "m/")
	if err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "Head of a marker", head, m)
	got, info := getInfo(t, s, "m/", m.ETag, 0, -1)
	wantEqual(t, "Get of a marker", got, nil)
	sameVersion(t, "Get of a marker", info, m)
	headMissing(t, s, "m") // the marker is no object "m"
	_, err = s.Put(ctx, "m2/", strings.NewReader("x"), 1)
	wantErr(t, "Put of a marker with a byte", err, object.ErrInvalidKey)
	headMissing(t, s, "m2/")
	_, err = s.CreateMultipart(ctx, "m3/")
	wantErr(t, "CreateMultipart of a marker", err, object.ErrInvalidKey)
	put(t, s, "m/", nil) // idempotent
	put(t, s, "m/x", []byte("x"))
	put(t, s, "m/sub/", nil)
	if got := list(t, s, "", "", 0); !slices.Equal(got, []string{"m/", "m/sub/", "m/x"}) {
		t.Fatalf("List = %q, want the markers among the objects", got)
	}
	if got := list(t, s, "m/", "m/", 0); !slices.Equal(got, []string{"m/sub/", "m/x"}) {
		t.Fatalf("List after the marker = %q", got)
	}
	entries, _ := listDir(t, s, "", "", 0)
	if got := entryNames(entries); !slices.Equal(got, []string{"m/ (p)"}) {
		t.Fatalf("ListDir(\"\") = %q, want the marker and its children as one prefix", got)
	}
	// The directory stays when its last object goes: its marker holds it.
	for _, k := range []string{"m/x", "m/sub/"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Head(ctx, "m/"); err != nil {
		t.Fatalf("Head of the marker after its children were deleted: %v", err)
	}
	if !hasPrefixEntry(t, s, "", "m/") {
		t.Fatal("the marked directory vanished with its children")
	}
}

// Deleting a marker removes it; objects below keep their prefix alive.
func testMarkerDelete(t *testing.T, s object.Store) {
	ctx := context.Background()
	put(t, s, "a/", nil)
	put(t, s, "b/", nil)
	put(t, s, "b/y", []byte("y"))
	for range 2 { // idempotent
		for _, k := range []string{"a/", "b/", "never/"} {
			if err := s.Delete(ctx, k); err != nil {
				t.Fatalf("Delete(%q): %v", k, err)
			}
		}
	}
	headMissing(t, s, "a/")
	headMissing(t, s, "b/")
	if hasPrefixEntry(t, s, "", "a/") {
		t.Fatal("a deleted empty marker still lists")
	}
	if !hasPrefixEntry(t, s, "", "b/") {
		t.Fatal("the prefix of b/y went with b's marker")
	}
	if got := list(t, s, "", "", 0); !slices.Equal(got, []string{"b/y"}) {
		t.Fatalf("List = %q", got)
	}
	if err := s.Delete(ctx, "b/y"); err != nil {
		t.Fatal(err)
	}
	if hasPrefixEntry(t, s, "", "b/") {
		t.Fatal("b/ still lists after its marker and last object were deleted")
	}
}

// A prefix that only objects imply is no marker, and goes with them; one
// that has a marker above it leaves the marker.
func testImpliedPrefix(t *testing.T, s object.Store) {
	ctx := context.Background()
	put(t, s, "i/j/k", []byte("k"))
	headMissing(t, s, "i/")
	headMissing(t, s, "i/j/")
	if got := list(t, s, "", "", 0); !slices.Equal(got, []string{"i/j/k"}) {
		t.Fatalf("List = %q, want no markers", got)
	}
	put(t, s, "i/", nil)
	if err := s.Delete(ctx, "i/j/k"); err != nil {
		t.Fatal(err)
	}
	if hasPrefixEntry(t, s, "i/", "i/j/") {
		t.Fatal("the implied prefix i/j/ outlived its last object")
	}
	if _, err := s.Head(ctx, "i/"); err != nil || !hasPrefixEntry(t, s, "", "i/") {
		t.Fatalf("the marker i/ went with an object below it: %v", err)
	}
	put(t, s, "p/q", []byte("q"))
	if err := s.Delete(ctx, "p/q"); err != nil {
		t.Fatal(err)
	}
	if hasPrefixEntry(t, s, "", "p/") {
		t.Fatal("the implied prefix p/ outlived its last object")
	}
}
