package objtest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

func create(t testing.TB, s object.Store, key string) object.Upload {
	t.Helper()
	u, err := s.CreateMultipart(context.Background(), key)
	if err != nil {
		t.Fatalf("CreateMultipart(%q): %v", key, err)
	}
	return u
}

func listUploads(t testing.TB, s object.Store, prefix string) []object.Upload {
	t.Helper()
	ups, err := s.ListUploads(context.Background(), prefix)
	if err != nil {
		t.Fatalf("ListUploads(%q): %v", prefix, err)
	}
	for _, u := range ups {
		if u.ID == "" || u.Started.IsZero() {
			t.Fatalf("ListUploads(%q) gave %+v", prefix, u)
		}
	}
	return ups
}

// uploadIDs renders uploads as key=id.
func uploadIDs(ups []object.Upload) []string {
	out := make([]string, 0, len(ups))
	for _, u := range ups {
		out = append(out, u.Key+"="+u.ID)
	}
	return out
}

// Uploads in progress are listed, by key or prefix, until completed or
// aborted.
func testListUploads(t *testing.T, s object.Store, o options) {
	ctx := context.Background()
	if ups := listUploads(t, s, "u/a"); len(ups) != 0 {
		t.Fatalf("ListUploads of an empty store = %+v", ups)
	}
	a, b1, b2, c := create(t, s, "u/a"), create(t, s, "u/b"), create(t, s, "u/b"), create(t, s, "v/c")
	checkUploads(t, s, "u/b", b1, b2)
	checkUploads(t, s, "u/a", a)
	if o.uploadsByKeyOnly {
		for _, prefix := range []string{"", "u/"} {
			_, err := s.ListUploads(ctx, prefix)
			wantErr(t, "ListUploads by a prefix", err, errors.ErrUnsupported)
		}
	} else {
		checkUploads(t, s, "u/", a, b1, b2)
		checkUploads(t, s, "", a, b1, b2, c)
	}
	if got := list(t, s, "", "", 0); len(got) != 0 {
		t.Fatalf("List shows uploads: %q", got)
	}
	if entries, _ := listDir(t, s, "", "", 0); len(entries) != 0 {
		t.Fatalf("ListDir shows uploads: %q", entryNames(entries))
	}
	if err := s.AbortMultipart(ctx, a); err != nil {
		t.Fatal(err)
	}
	p := uploadPart(t, s, c, 1, Data(80, 10))
	if _, err := s.CompleteMultipart(ctx, c, []object.Part{p}); err != nil {
		t.Fatal(err)
	}
	checkUploads(t, s, "u/a")
	checkUploads(t, s, "v/c")
	checkUploads(t, s, "u/b", b1, b2)
}

// checkUploads fails t unless ListUploads(prefix) lists want, in key order.
func checkUploads(t testing.TB, s object.Store, prefix string, want ...object.Upload) {
	t.Helper()
	got := listUploads(t, s, prefix)
	byKey := func(a, b object.Upload) int { return strings.Compare(a.Key, b.Key) }
	if !sameSet(uploadIDs(got), uploadIDs(want)) || !slices.IsSortedFunc(got, byKey) {
		t.Fatalf("ListUploads(%q) = %q, want %q in key order", prefix, uploadIDs(got), uploadIDs(want))
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
