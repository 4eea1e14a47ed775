package object_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/metered"
	"github.com/stratafs/strata/internal/object/objtest"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/throttle"
)

func TestValidateKey(t *testing.T) {
	for _, k := range []string{"a", "a/b/c", "blocks/00/ff-1", "a.b", "..a", "a..", ".hidden/x", "ünï", "a/", "a/b/"} {
		if err := object.ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v", k, err)
		}
	}
	for _, k := range []string{"", "/", "/a", "a//", "a//b", ".", "./", "..", "../", "a/./b", "a/../b", "a/../", "a\x00", "\xff", strings.Repeat("x", 1025)} {
		if err := object.ValidateKey(k); !errors.Is(err, object.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

// A valid key never leads outside the directory it is joined to.
func FuzzValidateKey(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a/../../b", "/etc/passwd", "a//b", "."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if object.ValidateKey(key) != nil {
			return
		}
		p := filepath.Join("/root", filepath.FromSlash(key))
		if !strings.HasPrefix(p, "/root/") || p != "/root/"+strings.TrimSuffix(key, "/") {
			t.Fatalf("valid key %q maps to %q", key, p)
		}
	})
}

func TestClampRange(t *testing.T) {
	for _, tc := range []struct{ size, off, length, start, n int64 }{
		{10, 0, -1, 0, 10}, {10, 3, 4, 3, 4}, {10, 8, 5, 8, 2}, {10, 10, -1, 10, 0}, {0, 0, 5, 0, 0},
	} {
		start, n, err := object.ClampRange(tc.size, tc.off, tc.length)
		if err != nil || start != tc.start || n != tc.n {
			t.Errorf("ClampRange(%d, %d, %d) = %d, %d, %v", tc.size, tc.off, tc.length, start, n, err)
		}
	}
	for _, off := range []int64{-1, 11} {
		if _, _, err := object.ClampRange(10, off, 1); !errors.Is(err, object.ErrInvalidRange) {
			t.Errorf("ClampRange(10, %d, 1) = %v", off, err)
		}
	}
}

func TestSizedReader(t *testing.T) {
	data := []byte("0123456789")
	got, err := io.ReadAll(object.SizedReader(iotest.OneByteReader(bytes.NewReader(data)), 10))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("exact: %q, %v", got, err)
	}
	if err := iotest.TestReader(object.SizedReader(bytes.NewReader(data), 10), data); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int64{9, 11, 0} {
		got, err := io.ReadAll(object.SizedReader(bytes.NewReader(data), size))
		if !errors.Is(err, object.ErrSizeMismatch) {
			t.Errorf("size %d: %v", size, err)
		}
		if size > 0 && size < 10 && int64(len(got)) >= size {
			t.Errorf("size %d: %d bytes delivered before the error; the full body must not be", size, len(got))
		}
	}
	if got, err := io.ReadAll(object.SizedReader(nil, 0)); err != nil || len(got) != 0 {
		t.Fatalf("nil body: %q, %v", got, err)
	}
}

func TestIsRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{object.WrapError(object.OpGet, "k", object.ErrNotFound), false},
		{object.WrapError(object.OpGet, "k", fmt.Errorf("%w: x", object.ErrThrottled)), true},
		{object.ErrTimeout, true},
		{object.ErrTransient, true},
		{io.ErrUnexpectedEOF, true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("%w: %w", object.ErrTransient, context.Canceled), false},
		{errors.New("access denied"), false},
	} {
		if got := object.IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v", tc.err, got)
		}
	}
}

func TestWrapError(t *testing.T) {
	err := object.WrapError(object.OpGet, "a/b", object.ErrNotFound)
	if err.Error() != `object get "a/b": object not found` || !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("WrapError = %v", err)
	}
	if again := object.WrapError(object.OpGet, "a/b", err); again != err {
		t.Fatalf("wrapped twice: %v", again)
	}
}

func TestPutParallelAbortsOnFailure(t *testing.T) {
	ctx := context.Background()
	inner := mem.New()
	in := faulty.NewInjector(1)
	in.Set(faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpUploadPart}, Every: 2})
	s := faulty.New(inner, in)
	data := objtest.Data(1, 3*object.MinPartSize)
	err := object.PutParallel(ctx, s, "k", bytes.NewReader(data), int64(len(data)), object.ParallelOptions{PartSize: object.MinPartSize, Concurrency: 2})
	if !errors.Is(err, object.ErrTransient) {
		t.Fatalf("PutParallel: %v", err)
	}
	if inner.Uploads() != 0 || inner.Len() != 0 {
		t.Fatalf("%d uploads and %d objects left after a failed PutParallel", inner.Uploads(), inner.Len())
	}
}

// With Abandon, a failed upload is handed over instead of aborted, and so
// is the key of a CreateMultipart whose outcome is unknown (it timed out,
// or its caller gave up: a hung store may still run it when it resumes),
// but not that of one the store refused.
func TestPutParallelAbandons(t *testing.T) {
	data := objtest.Data(3, 2*object.MinPartSize)
	for _, c := range []struct {
		name    string
		rule    faulty.Rule
		cancel  bool
		want    string // the abandoned upload: "id", "key" or ""
		uploads int
	}{
		{"part fails", faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpUploadPart}}, false, "id", 1},
		{"create times out", faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpCreateMultipart}, Err: object.ErrTimeout, After: true}, false, "key", 1},
		{"caller gives up", faulty.Rule{Kind: faulty.Timeout, Ops: []object.Op{object.OpCreateMultipart}}, true, "key", 0},
		{"create refused", faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpCreateMultipart}, Err: object.ErrInvalidKey}, false, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := mem.New()
			in := faulty.NewInjector(1)
			in.Set(c.rule)
			ctx, cancel := context.WithCancel(context.Background())
			if c.cancel {
				cancel()
			}
			defer cancel()
			var got []object.Upload
			err := object.PutParallel(ctx, faulty.New(inner, in), "k", bytes.NewReader(data), int64(len(data)),
				object.ParallelOptions{PartSize: object.MinPartSize, Abandon: func(u object.Upload) { got = append(got, u) }})
			if err == nil {
				t.Fatal("PutParallel succeeded")
			}
			kind := ""
			if len(got) == 1 && got[0].Key == "k" {
				kind = map[bool]string{true: "id", false: "key"}[got[0].ID != ""]
			}
			if kind != c.want || len(got) > 1 || inner.Uploads() != c.uploads {
				t.Fatalf("abandoned %v, %d uploads left to the aborter; want %q, %d", got, inner.Uploads(), c.want, c.uploads)
			}
		})
	}
}

func TestPutParallelUsesMultipart(t *testing.T) {
	ctx := context.Background()
	in := faulty.NewInjector(1)
	// Count the parts: a Latency rule of zero fires without delaying.
	in.Set(faulty.Rule{Kind: faulty.Latency, Ops: []object.Op{object.OpUploadPart}})
	s := faulty.New(mem.New(), in)
	data := objtest.Data(2, 2*object.MinPartSize+1)
	if err := object.PutParallel(ctx, s, "k", bytes.NewReader(data), int64(len(data)), object.ParallelOptions{PartSize: 1}); err != nil {
		t.Fatal(err)
	}
	if in.Fired() != 3 {
		t.Fatalf("%d parts uploaded, want 3 (part size raised to the minimum)", in.Fired())
	}
}

// wholeStore is a Store that says it puts whole (object.WholePutter).
type wholeStore struct{ object.Store }

func (wholeStore) PutsWhole() bool { return true }

// A store that puts whole gets one Put however large the body, and the
// wrappers pass the ability on, all but faulty.
func TestPutParallelPutsWhole(t *testing.T) {
	ctx := context.Background()
	in := faulty.NewInjector(1)
	// Count the calls: a Latency rule of zero fires without delaying.
	in.Set(faulty.Rule{Kind: faulty.Latency, Ops: []object.Op{object.OpPut, object.OpCreateMultipart, object.OpUploadPart}})
	s := wholeStore{faulty.New(mem.New(), in)}
	data := objtest.Data(3, 3*object.MinPartSize+1)
	if err := object.PutParallel(ctx, s, "k", bytes.NewReader(data), int64(len(data)), object.ParallelOptions{PartSize: 1}); err != nil {
		t.Fatal(err)
	}
	if in.Fired() != 1 {
		t.Fatalf("%d calls, want one Put", in.Fired())
	}
	local, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		s    object.Store
		want bool
	}{
		{"localfs", local, true},
		{"mem", mem.New(), false},
		{"retry(localfs)", retry.New(local, retry.Policy{}), true},
		{"retry(mem)", retry.New(mem.New(), retry.Policy{}), false},
		{"throttle(localfs)", throttle.New(local, throttle.NewLink(throttle.Config{})), true},
		{"faulty(localfs)", faulty.New(local, faulty.NewInjector(1)), false},
	} {
		if got := object.PutsWhole(tc.s); got != tc.want {
			t.Errorf("PutsWhole(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// What a local directory's listing leaves out reaches the caller through
// every wrapper; a store that leaves nothing out says so.
func TestListDirSkipsThroughWrappers(t *testing.T) {
	ctx := context.Background()
	local, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.Put(ctx, "d/f", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(local.Root(), "d", "link")); err != nil {
		t.Fatal(err)
	}
	want := []object.Skipped{{Key: "d/link", Why: "a symbolic link"}}
	for _, tc := range []struct {
		name string
		s    object.Store
		want []object.Skipped
	}{
		{"localfs", local, want},
		{"retry(localfs)", retry.New(local, retry.Policy{}), want},
		{"throttle(localfs)", throttle.New(local, throttle.NewLink(throttle.Config{})), want},
		{"faulty(localfs)", faulty.New(local, faulty.NewInjector(1)), want},
		{"metered(localfs)", metered.New(local, nopMeter{}), want},
		{"retry(mem)", retry.New(mem.New(), retry.Policy{}), nil},
	} {
		entries, skipped, _, err := object.ListDirSkips(ctx, tc.s, "d/", "", 0)
		if err != nil || !slices.Equal(skipped, tc.want) {
			t.Errorf("%s: skipped %+v, %v; want %+v", tc.name, skipped, err, tc.want)
		}
		if tc.want != nil && (len(entries) != 1 || entries[0].Key != "d/f") {
			t.Errorf("%s: entries %+v", tc.name, entries)
		}
	}
}

// nopMeter hears nothing.
type nopMeter struct{}

func (nopMeter) Request(object.Op, time.Duration, error) {}
func (nopMeter) Retry(object.Op, error)                  {}
