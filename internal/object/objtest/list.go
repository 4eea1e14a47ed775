package objtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

// listKeys are chosen so that byte order differs from a naive walk of nested
// directories: "a.txt" < "a/b" because '.' < '/', and "a0" > "a/...".
var listKeys = []string{"a/b/c", "a/b/d", "a/b.txt", "a.txt", "a/c", "a0", "ab", "b/x/y/z", "b/y", "c"}

func sortedCopy(keys []string) []string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return s
}

func list(t testing.TB, s object.Store, prefix, startAfter string, limit int) []string {
	t.Helper()
	infos, err := s.List(context.Background(), prefix, startAfter, limit)
	if err != nil {
		t.Fatalf("List(%q, %q, %d): %v", prefix, startAfter, limit, err)
	}
	keys := make([]string, 0, len(infos))
	for _, in := range infos {
		keys = append(keys, in.Key)
	}
	return keys
}

func testList(t *testing.T, s object.Store) {
	for i, k := range listKeys {
		put(t, s, k, Data(uint64(i), i))
	}
	all := sortedCopy(listKeys)
	infos, err := s.List(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range infos {
		if in.Size != int64(slices.Index(listKeys, in.Key)) || in.ModTime.IsZero() {
			t.Errorf("List entry %d = %+v: wrong size or no ModTime", i, in)
		}
	}
	for _, tc := range []struct {
		prefix, after string
		limit         int
		want          []string
	}{
		{"", "", 0, all},
		{"a/", "", 0, []string{"a/b.txt", "a/b/c", "a/b/d", "a/c"}},
		{"a", "", 0, []string{"a.txt", "a/b.txt", "a/b/c", "a/b/d", "a/c", "a0", "ab"}},
		{"a/b", "", 0, []string{"a/b.txt", "a/b/c", "a/b/d"}},
		{"b/x/", "", 0, []string{"b/x/y/z"}},
		{"", "a/b/c", 0, all[slices.Index(all, "a/b/c")+1:]},
		{"", "a/b", 0, all[slices.Index(all, "a/b.txt"):]}, // startAfter need not exist
		{"a/", "a/b.txt", 2, []string{"a/b/c", "a/b/d"}},
		{"", "", 3, all[:3]},
		{"", "c", 0, nil},
		{"zzz", "", 0, nil},
		{"a/b/c/", "", 0, nil}, // a prefix below an object
	} {
		got := list(t, s, tc.prefix, tc.after, tc.limit)
		if !slices.Equal(got, tc.want) {
			t.Errorf("List(%q, %q, %d) = %q, want %q", tc.prefix, tc.after, tc.limit, got, tc.want)
		}
	}
}

func testListPaging(t *testing.T, s object.Store) {
	var want []string
	for i := range 25 {
		k := fmt.Sprintf("p/%c/%02d", 'a'+i%3, i)
		want = append(want, k)
		put(t, s, k, []byte(k))
	}
	slices.Sort(want)
	var got []string
	after := ""
	for {
		page := list(t, s, "p/", after, 4)
		got = append(got, page...)
		if len(page) < 4 {
			break
		}
		after = page[len(page)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged List = %q, want %q", got, want)
	}
}

func testDelete(t *testing.T, s object.Store) {
	ctx := context.Background()
	put(t, s, "d/1", []byte("1"))
	put(t, s, "d/2", []byte("2"))
	for range 2 { // the second time the key is missing: still no error
		if err := s.Delete(ctx, "d/1"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	_, err := s.Head(ctx, "d/1")
	wantErr(t, "Head after Delete", err, object.ErrNotFound)
	if got := list(t, s, "", "", 0); !slices.Equal(got, []string{"d/2"}) {
		t.Fatalf("List after Delete = %q", got)
	}
	put(t, s, "d/1", []byte("again")) // a deleted key can be written again
	wantEqual(t, "Get after re-Put", get(t, s, "d/1", 0, -1), []byte("again"))
}

func testConcurrentPuts(t *testing.T, s object.Store) {
	const writers, perWriter = 8, 6
	ctx := context.Background()
	same := Data(10, 4096)
	errs := make(chan error, writers*perWriter*2)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				k := fmt.Sprintf("c/%d/%d", w, i)
				d := Data(uint64(w*100+i), 1000+i*1000)
				_, err := s.Put(ctx, k, strings.NewReader(string(d)), int64(len(d)))
				errs <- err
				// Everyone also writes the same content to one key.
				_, err = s.Put(ctx, "c/same", strings.NewReader(string(same)), int64(len(same)))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for w := range writers {
		for i := range perWriter {
			k := fmt.Sprintf("c/%d/%d", w, i)
			wantEqual(t, k, get(t, s, k, 0, -1), Data(uint64(w*100+i), 1000+i*1000))
		}
	}
	wantEqual(t, "c/same", get(t, s, "c/same", 0, -1), same)
	if n := len(list(t, s, "c/", "", 0)); n != writers*perWriter+1 {
		t.Fatalf("List found %d objects, want %d", n, writers*perWriter+1)
	}
}

func testCanceled(t *testing.T, s object.Store) {
	put(t, s, "x", []byte("x"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := map[string]error{"Delete": s.Delete(ctx, "x")}
	_, checks["Put"] = s.Put(ctx, "y", strings.NewReader("y"), 1)
	_, checks["Head"] = s.Head(ctx, "x")
	_, checks["List"] = s.List(ctx, "", "", 0)
	_, _, checks["ListDir"] = s.ListDir(ctx, "", "", 0)
	_, checks["Copy"] = s.Copy(ctx, "x", "", "z")
	_, checks["ListUploads"] = s.ListUploads(ctx, "")
	_, checks["CreateMultipart"] = s.CreateMultipart(ctx, "m")
	rc, err := s.Get(ctx, "x", 0, -1)
	if err == nil {
		// A store may hand out the reader first; then reading must fail.
		_, err = rc.Read(make([]byte, 1))
		rc.Close()
	}
	checks["Get"] = err
	for op, err := range checks {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: got %v, want context.Canceled", op, err)
		}
	}
}
