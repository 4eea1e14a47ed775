// Package objtest is the conformance suite and the shared benchmarks for
// object.Store implementations: every backend and wrapper runs Run in its own
// tests, so they all keep the same contract, and Bench so they can be
// compared.
//
// It is a test kit only: production code never imports it.
package objtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/object"
)

// Option adapts Run to a store's documented limits.
type Option func(*options)

type options struct {
	uploadsByKeyOnly bool
}

// UploadsByKeyOnly says the store lists the uploads of one whole key only,
// as MinIO does: Run then checks that ListUploads by a prefix that is no key
// fails with errors.ErrUnsupported instead of listing.
func UploadsByKeyOnly() Option { return func(o *options) { o.uploadsByKeyOnly = true } }

// Run checks that the stores made by newStore keep the object.Store
// contract. Each subtest gets a store of its own from newStore, which must be
// empty. Some subtests wrap it in faulty and retry themselves, to check that
// reads resumed by the retry layer keep their version on every backend.
func Run(t *testing.T, newStore func(t *testing.T) object.Store, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tests := []test{
		{"PutGet", testPutGet},
		{"GetRange", testGetRange},
		{"Empty", testEmpty},
		{"Large", testLarge},
		{"Overwrite", testOverwrite},
		{"Head", testHead},
		{"NotFound", testNotFound},
		{"InvalidKey", testInvalidKey},
		{"SizeMismatch", testSizeMismatch},
		{"List", testList},
		{"ListPaging", testListPaging},
		{"Delete", testDelete},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Canceled", testCanceled},
		{"PutParallel", testPutParallel},
		{"Multipart", testMultipart},
		{"MultipartAbort", testMultipartAbort},
	}
	tests = append(tests, versionTests...)
	tests = append(tests, listDirTests...)
	tests = append(tests, markerTests...)
	tests = append(tests, copyTests...)
	tests = append(tests, test{"ListUploads", func(t *testing.T, s object.Store) { testListUploads(t, s, o) }})
	tests = append(tests, writerTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// test is one subtest of Run, on an empty store of its own.
type test struct {
	name string
	fn   func(t *testing.T, s object.Store)
}

// Data returns n deterministic pseudo-random bytes, distinct per seed.
func Data(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	_, _ = r.Read(b)
	return b
}

func put(t testing.TB, s object.Store, key string, data []byte) object.Info {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	if info.Key != key || info.Size != int64(len(data)) || info.ETag == "" || info.ModTime.IsZero() {
		t.Fatalf("Put(%q) of %d bytes = %+v", key, len(data), info)
	}
	return info
}

func get(t testing.TB, s object.Store, key string, off, length int64) []byte {
	t.Helper()
	rc, err := s.Get(context.Background(), key, off, length)
	if err != nil {
		t.Fatalf("Get(%q, %d, %d): %v", key, off, length, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q, %d, %d): read: %v", key, off, length, err)
	}
	return b
}

func wantEqual(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes, want %d bytes (equal prefix %d)", what, len(got), len(want), commonPrefix(got, want))
	}
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// stream hides every method but Read, as a network body would.
type stream struct{ r io.Reader }

func (s stream) Read(p []byte) (int, error) { return s.r.Read(p) }

func testPutGet(t *testing.T, s object.Store) {
	data := Data(1, 1000)
	put(t, s, "a/b/c", data)
	wantEqual(t, "Get whole", get(t, s, "a/b/c", 0, -1), data)
	// A body that cannot seek takes other paths in some backends.
	big := Data(11, 1<<20+3)
	if _, err := s.Put(context.Background(), "stream", stream{bytes.NewReader(big)}, int64(len(big))); err != nil {
		t.Fatalf("Put of a stream: %v", err)
	}
	wantEqual(t, "Get of a streamed Put", get(t, s, "stream", 0, -1), big)
}

func testGetRange(t *testing.T, s object.Store) {
	data := Data(2, 1000)
	put(t, s, "r", data)
	for _, tc := range []struct{ off, length, from, to int64 }{
		{0, -1, 0, 1000},
		{0, 10, 0, 10},
		{10, 20, 10, 30},
		{990, -1, 990, 1000},
		{990, 100, 990, 1000},  // length beyond the end is cut
		{1000, -1, 1000, 1000}, // offset at the end is empty
		{1000, 5, 1000, 1000},
		{500, 0, 500, 500},
		{999, 1, 999, 1000},
	} {
		got := get(t, s, "r", tc.off, tc.length)
		wantEqual(t, fmt.Sprintf("Get(%d, %d)", tc.off, tc.length), got, data[tc.from:tc.to])
	}
	for _, off := range []int64{-1, 1001, 5000} {
		rc, err := s.Get(context.Background(), "r", off, 10)
		if err == nil {
			rc.Close()
		}
		wantErr(t, fmt.Sprintf("Get(off=%d)", off), err, object.ErrInvalidRange)
	}
}

func testEmpty(t *testing.T, s object.Store) {
	put(t, s, "empty", nil)
	wantEqual(t, "Get", get(t, s, "empty", 0, -1), nil)
	wantEqual(t, "Get range", get(t, s, "empty", 0, 10), nil)
	info, err := s.Head(context.Background(), "empty")
	if err != nil || info.Size != 0 {
		t.Fatalf("Head = %+v, %v; want size 0", info, err)
	}
}

func testLarge(t *testing.T, s object.Store) {
	data := Data(3, 3<<20+17)
	put(t, s, "big/object", data)
	wantEqual(t, "Get whole", get(t, s, "big/object", 0, -1), data)
	off, n := int64(1<<20+3), int64(1<<20+5)
	wantEqual(t, "Get range", get(t, s, "big/object", off, n), data[off:off+n])
}

func testOverwrite(t *testing.T, s object.Store) {
	data := Data(4, 100)
	put(t, s, "k", data)
	put(t, s, "k", data) // idempotent
	wantEqual(t, "after same-content overwrite", get(t, s, "k", 0, -1), data)
	other := Data(5, 50)
	put(t, s, "k", other)
	wantEqual(t, "after overwrite", get(t, s, "k", 0, -1), other)
}

func testHead(t *testing.T, s object.Store) {
	put(t, s, "dir/h", Data(6, 123))
	info, err := s.Head(context.Background(), "dir/h")
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "dir/h" || info.Size != 123 || info.ModTime.IsZero() {
		t.Fatalf("Head = %+v; want key dir/h, size 123, a ModTime", info)
	}
}

func testNotFound(t *testing.T, s object.Store) {
	ctx := context.Background()
	put(t, s, "exists/x", []byte("x"))
	_, err := s.Get(ctx, "missing", 0, -1)
	wantErr(t, "Get", err, object.ErrNotFound)
	if !strings.Contains(err.Error(), "missing") {
		t.Errorf("Get error %q does not name the key", err)
	}
	_, err = s.Head(ctx, "missing")
	wantErr(t, "Head", err, object.ErrNotFound)
	_, err = s.Head(ctx, "exists") // a "directory" is no object
	wantErr(t, "Head of a key prefix", err, object.ErrNotFound)
	if object.IsRetryable(err) {
		t.Errorf("IsRetryable(%v) = true", err)
	}
}

func testInvalidKey(t *testing.T, s object.Store) {
	ctx := context.Background()
	for _, key := range []string{"", "/", "/abs", "a//b", "a//", "..", "a/../b", "./a", "a/.", "nul\x00"} {
		_, err := s.Put(ctx, key, strings.NewReader("x"), 1)
		wantErr(t, fmt.Sprintf("Put(%q)", key), err, object.ErrInvalidKey)
		_, err = s.Get(ctx, key, 0, -1)
		wantErr(t, fmt.Sprintf("Get(%q)", key), err, object.ErrInvalidKey)
		_, err = s.Head(ctx, key)
		wantErr(t, fmt.Sprintf("Head(%q)", key), err, object.ErrInvalidKey)
		err = s.Delete(ctx, key)
		wantErr(t, fmt.Sprintf("Delete(%q)", key), err, object.ErrInvalidKey)
	}
}

func testSizeMismatch(t *testing.T, s object.Store) {
	ctx := context.Background()
	old := Data(7, 10)
	put(t, s, "old", old)
	for _, tc := range []struct {
		key  string
		data []byte
		size int64
	}{
		{"new-short", Data(8, 5), 10},
		{"new-long", Data(8, 20), 10},
		{"old", Data(9, 5), 10},
		{"old", Data(9, 20), 10},
		{"new-long", Data(8, 1<<20), 1<<20 - 1},
	} {
		what := fmt.Sprintf("Put(%q) of %d bytes as %d", tc.key, len(tc.data), tc.size)
		_, err := s.Put(ctx, tc.key, bytes.NewReader(tc.data), tc.size)
		wantErr(t, what, err, object.ErrSizeMismatch)
		_, err = s.Put(ctx, tc.key, stream{bytes.NewReader(tc.data)}, tc.size)
		wantErr(t, what+" from a stream", err, object.ErrSizeMismatch)
	}
	for _, key := range []string{"new-short", "new-long"} {
		_, err := s.Head(ctx, key)
		wantErr(t, "Head after a failed Put", err, object.ErrNotFound)
	}
	wantEqual(t, "object after failed overwrites", get(t, s, "old", 0, -1), old)
}
