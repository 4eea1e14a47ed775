package objtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

var listDirTests = []test{
	{"ListDir", testListDir},
	{"ListDirPaging", testListDirPaging},
}

// dirKeys mix objects, markers and nested prefixes; "d/b.txt" < "d/b/"
// because '.' < '/'.
var dirKeys = []string{"d/", "d/a", "d/b.txt", "d/b/c", "d/b/d/e", "d/c/", "d/c0", "d.txt", "d0/x", "e"}

// entryNames renders entries as keys, prefixes marked by a trailing " (p)".
func entryNames(entries []object.Entry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Prefix {
			out = append(out, e.Key+" (p)")
		} else {
			out = append(out, e.Key)
		}
	}
	return out
}

func listDir(t testing.TB, s object.Store, prefix, token string, limit int) ([]object.Entry, string) {
	t.Helper()
	entries, next, err := s.ListDir(context.Background(), prefix, token, limit)
	if err != nil {
		t.Fatalf("ListDir(%q, %q, %d): %v", prefix, token, limit, err)
	}
	return entries, next
}

func testListDir(t *testing.T, s object.Store) {
	ctx := context.Background()
	for i, k := range dirKeys {
		if object.IsMarker(k) {
			put(t, s, k, nil)
		} else {
			put(t, s, k, Data(uint64(i), i))
		}
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"d.txt", "d/ (p)", "d0/ (p)", "e"}},
		{"d/", []string{"d/a", "d/b.txt", "d/b/ (p)", "d/c/ (p)", "d/c0"}}, // not the marker d/ itself
		{"d/b/", []string{"d/b/c", "d/b/d/ (p)"}},
		{"d/b", []string{"d/b.txt", "d/b/ (p)"}}, // a prefix that is no directory
		{"d/c/", nil},                            // only its marker
		{"nope/", nil},
		{"d/a/", nil}, // under an object
	} {
		entries, next := listDir(t, s, tc.prefix, "", 0)
		if got := entryNames(entries); !slices.Equal(got, tc.want) || next != "" {
			t.Errorf("ListDir(%q) = %q, next %q; want %q", tc.prefix, got, next, tc.want)
		}
		for _, e := range entries {
			if e.Prefix {
				if e.Size != 0 || e.ETag != "" {
					t.Errorf("prefix entry %+v has more than a key", e)
				}
				continue
			}
			head, err := s.Head(ctx, e.Key)
			if err != nil {
				t.Fatal(err)
			}
			sameVersion(t, "ListDir entry "+e.Key, e.Info, head)
		}
	}
}

// Many pages, of several sizes: every entry once, in order, a prefix with
// children across pages once, and next empty only at the end.
func testListDirPaging(t *testing.T, s object.Store) {
	var want []string
	for i := range 40 {
		k := fmt.Sprintf("p/o%02d", i)
		put(t, s, k, []byte(k))
		want = append(want, k)
	}
	for i := range 12 {
		dir := fmt.Sprintf("p/d%02d/", i)
		for j := range 1 + i%3 {
			put(t, s, fmt.Sprintf("%sx%d", dir, j), []byte("x"))
		}
		want = append(want, dir+" (p)")
	}
	put(t, s, "p/m/", nil)
	want = append(want, "p/m/ (p)")
	slices.Sort(want)
	for _, limit := range []int{1, 3, 7, 52, 53, 1000, 0} {
		var got []string
		token, pages := "", 0
		for {
			entries, next := listDir(t, s, "p/", token, limit)
			pages++
			if limit > 0 && len(entries) > limit {
				t.Fatalf("limit %d: a page of %d entries", limit, len(entries))
			}
			got = append(got, entryNames(entries)...)
			if next == "" {
				break
			}
			if pages > len(want)+1 {
				t.Fatalf("limit %d: no end after %d pages", limit, pages)
			}
			token = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: paged ListDir = %q, want %q", limit, got, want)
		}
		if limit > 0 && pages < len(want)/limit {
			t.Fatalf("limit %d: %d pages for %d entries", limit, pages, len(want))
		}
	}
	// The children of a prefix are listed under it, not as the prefix's.
	entries, _ := listDir(t, s, "p/d02/", "", 0)
	if got := entryNames(entries); !slices.Equal(got, []string{"p/d02/x0", "p/d02/x1", "p/d02/x2"}) {
		t.Fatalf("ListDir(p/d02/) = %q", got)
	}
}
