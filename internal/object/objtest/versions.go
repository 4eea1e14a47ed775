package objtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/retry"
)

var versionTests = []test{
	{"ETags", testETags},
	{"GetVersion", testGetVersion},
	{"GetVersionGone", testGetVersionGone},
	{"ReadDuringReplace", testReadDuringReplace},
	{"ResumeKeepsVersion", testResumeKeepsVersion},
}

// getInfo reads a whole object and returns its bytes and the reader's Info.
func getInfo(t testing.TB, s object.Store, key, etag string, off, length int64) ([]byte, object.Info) {
	t.Helper()
	rc, err := s.GetVersion(context.Background(), key, etag, off, length)
	if err != nil {
		t.Fatalf("GetVersion(%q, %q, %d, %d): %v", key, etag, off, length, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("GetVersion(%q, %q, %d, %d): read: %v", key, etag, off, length, err)
	}
	return b, rc.Info()
}

// sameVersion fails t unless got describes the version want.
func sameVersion(t testing.TB, what string, got, want object.Info) {
	t.Helper()
	if got.Key != want.Key || got.Size != want.Size || got.ETag != want.ETag || got.ModTime.IsZero() {
		t.Fatalf("%s = %+v, want key %q, size %d, ETag %q and a ModTime", what, got, want.Key, want.Size, want.ETag)
	}
}

// Every way of looking at an object gives the ETag its Put returned, until
// it is overwritten with other content.
func testETags(t *testing.T, s object.Store) {
	ctx := context.Background()
	v1 := put(t, s, "v/k", Data(40, 1000))
	other := put(t, s, "v/other", Data(41, 10))
	if v1.ETag == other.ETag {
		t.Fatalf("two objects of different content share ETag %q", v1.ETag)
	}
	for range 2 { // reading changes nothing
		head, err := s.Head(ctx, "v/k")
		if err != nil {
			t.Fatal(err)
		}
		sameVersion(t, "Head", head, v1)
		infos, err := s.List(ctx, "v/k", "", 0)
		if err != nil || len(infos) != 1 {
			t.Fatalf("List = %+v, %v", infos, err)
		}
		sameVersion(t, "List", infos[0], v1)
		entries, _, err := s.ListDir(ctx, "v/", "", 0)
		if err != nil || len(entries) != 2 {
			t.Fatalf("ListDir = %+v, %v", entries, err)
		}
		sameVersion(t, "ListDir", entries[0].Info, v1)
		_, info := getInfo(t, s, "v/k", "", 10, 20)
		sameVersion(t, "Get's Reader.Info", info, v1)
	}
	put(t, s, "v/other", Data(42, 10)) // another key's write leaves this one's alone
	head, err := s.Head(ctx, "v/k")
	if err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "Head after a write of another key", head, v1)
	v2 := put(t, s, "v/k", Data(43, 1000))
	if v2.ETag == v1.ETag {
		t.Fatalf("overwrite with other content kept ETag %q", v1.ETag)
	}
	head, err = s.Head(ctx, "v/k")
	if err != nil {
		t.Fatal(err)
	}
	sameVersion(t, "Head after overwrite", head, v2)
}

// A read of a version that is not the current one fails, before any byte.
func testGetVersion(t *testing.T, s object.Store) {
	ctx := context.Background()
	d1, d2 := Data(44, 5000), Data(45, 3000)
	v1 := put(t, s, "k", d1)
	got, info := getInfo(t, s, "k", v1.ETag, 0, -1)
	wantEqual(t, "GetVersion of the current version", got, d1)
	sameVersion(t, "GetVersion's Reader.Info", info, v1)
	got, info = getInfo(t, s, "k", v1.ETag, 100, 50)
	wantEqual(t, "GetVersion of a range", got, d1[100:150])
	sameVersion(t, "ranged GetVersion's Reader.Info (the whole object's size)", info, v1)
	v2 := put(t, s, "k", d2)
	for _, r := range []struct{ off, length int64 }{{0, -1}, {10, 10}, {0, 0}, {3000, -1}} {
		rc, err := s.GetVersion(ctx, "k", v1.ETag, r.off, r.length)
		if rc != nil {
			rc.Close()
			t.Fatalf("GetVersion(%d, %d) of a stale version handed out a reader", r.off, r.length)
		}
		wantErr(t, "GetVersion of a stale version", err, object.ErrChanged)
		if object.IsRetryable(err) || errors.Is(err, object.ErrNotFound) {
			t.Fatalf("GetVersion of a stale version: %v is retryable or not-found", err)
		}
	}
	_, err := s.GetVersion(ctx, "k", "no-such-etag", 0, -1)
	wantErr(t, "GetVersion of an unknown ETag", err, object.ErrChanged)
	got, _ = getInfo(t, s, "k", v2.ETag, 0, -1)
	wantEqual(t, "GetVersion of the new version", got, d2)
	got, _ = getInfo(t, s, "k", v2.ETag, 3000, 5)
	wantEqual(t, "GetVersion of an empty range at the end", got, nil)
}

// A version of an object that is gone is both changed and not found.
func testGetVersionGone(t *testing.T, s object.Store) {
	ctx := context.Background()
	v := put(t, s, "gone", []byte("x"))
	if err := s.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gone", "never"} {
		_, err := s.GetVersion(ctx, key, v.ETag, 0, -1)
		wantErr(t, "GetVersion of a deleted object", err, object.ErrChanged)
		wantErr(t, "GetVersion of a deleted object", err, object.ErrNotFound)
	}
}

// An object replaced while it is read yields the old version's bytes only
// (or, where a store cannot tell, fails with ErrChanged): never a mix.
func testReadDuringReplace(t *testing.T, s object.Store) {
	ctx := context.Background()
	d1, d2 := Data(46, 1<<20), Data(47, 1<<20)
	for _, versioned := range []bool{false, true} {
		etag := ""
		if v1 := put(t, s, "r", d1); versioned {
			etag = v1.ETag
		}
		rc, err := s.GetVersion(ctx, "r", etag, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 1000)
		if _, err := io.ReadFull(rc, head); err != nil {
			t.Fatal(err)
		}
		// NB: a store may hold the write back until the reader is closed.
		done := make(chan error, 1)
		go func() {
			_, err := s.Put(ctx, "r", bytes.NewReader(d2), int64(len(d2)))
			done <- err
		}()
		rest, err := io.ReadAll(rc)
		rc.Close()
		if perr := <-done; perr != nil {
			t.Fatal(perr)
		}
		got := append(head, rest...)
		if err != nil {
			wantErr(t, "read during a replace", err, object.ErrChanged)
			got = got[:min(len(got), len(d1))]
			wantEqual(t, "bytes read before the change showed", got, d1[:len(got)])
			continue
		}
		wantEqual(t, "read during a replace", got, d1)
	}
}

// A read that the retry layer resumes after a broken body resumes on the
// version it started with, and fails with ErrChanged rather than splice in
// another version.
func testResumeKeepsVersion(t *testing.T, s object.Store) {
	ctx := context.Background()
	const cut = 1000 // bytes each response delivers before it breaks
	in := faulty.NewInjector(1)
	rs := retry.New(faulty.New(s, in), retry.Policy{MaxAttempts: 100, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond})
	d1 := Data(48, 20*cut+7)
	v1 := put(t, s, "resume", d1)
	in.Set(faulty.Rule{Kind: faulty.ShortRead, Bytes: cut})
	for _, etag := range []string{"", v1.ETag} {
		got, info := getInfo(t, rs, "resume", etag, 0, -1)
		wantEqual(t, "a read resumed 20 times", got, d1)
		sameVersion(t, "the resumed read's Info", info, v1)
	}
	fired := in.Fired()
	for i, etag := range []string{"", "current"} {
		cur := put(t, s, "resume", Data(uint64(49+i), len(d1)))
		if etag != "" {
			etag = cur.ETag
		}
		rc, err := rs.GetVersion(ctx, "resume", etag, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		first := make([]byte, cut)
		if _, err := io.ReadFull(rc, first); err != nil {
			t.Fatal(err)
		}
		put(t, s, "resume", Data(uint64(60+i), len(d1))) // replaced before the resume
		rest, err := io.ReadAll(rc)
		rc.Close()
		wantErr(t, "a read resumed after the object changed", err, object.ErrChanged)
		if len(rest) != 0 {
			t.Fatalf("a resumed read returned %d bytes of the new version", len(rest))
		}
	}
	if in.Fired() == fired {
		t.Fatal("no read was cut short")
	}
}
