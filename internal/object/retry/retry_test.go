package retry_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objtest"
	"github.com/stratafs/strata/internal/object/retry"
)

var ctx = context.Background()

// fast keeps backoffs tiny: the tests check what is retried, not how long
// it waits.
var fast = retry.Policy{MaxAttempts: 40, BaseDelay: 50 * time.Microsecond, MaxDelay: time.Millisecond}

// storm is faulty.Mix plus calls that hang until the attempt times out.
func storm() []faulty.Rule {
	return append(faulty.Mix(0.2), faulty.Rule{Kind: faulty.Timeout, Prob: 0.02})
}

// The conformance suite passes through the retry layer while the store
// underneath fails often.
func TestConformanceUnderFaults(t *testing.T) {
	backends := map[string]func(t *testing.T) object.Store{
		"mem": func(*testing.T) object.Store { return mem.New() },
		"localfs": func(t *testing.T) object.Store {
			s, err := localfs.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, backend := range backends {
		t.Run(name, func(t *testing.T) {
			var fired atomic.Int64
			objtest.Run(t, func(t *testing.T) object.Store {
				in := faulty.NewInjector(uint64(len(t.Name())))
				in.Set(storm()...)
				t.Cleanup(func() { fired.Add(in.Fired()) })
				p := fast
				p.AttemptTimeout = 50 * time.Millisecond
				return retry.New(faulty.New(backend(t), in), p)
			})
			t.Cleanup(func() {
				if fired.Load() < 100 {
					t.Errorf("only %d faults injected: the storm was too mild to prove anything", fired.Load())
				}
			})
		})
	}
}

func newStore(t *testing.T, p retry.Policy, rules ...faulty.Rule) (object.Store, *faulty.Injector, *atomic.Int64) {
	in := faulty.NewInjector(1)
	in.Set(rules...)
	var retries atomic.Int64
	p.OnRetry = func(object.Op, string, int, error) { retries.Add(1) }
	return retry.New(faulty.New(mem.New(), in), p), in, &retries
}

func TestNotRetried(t *testing.T) {
	s, _, retries := newStore(t, fast)
	if _, err := s.Head(ctx, "missing"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Delete(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Delete with a cancelled context: %v", err)
	}
	if n := retries.Load(); n != 0 {
		t.Fatalf("%d retries of errors that are not retryable", n)
	}
}

func TestGivesUp(t *testing.T) {
	p := fast
	p.MaxAttempts = 5
	s, in, retries := newStore(t, p, faulty.Rule{Kind: faulty.Error})
	_, err := s.Put(ctx, "k", strings.NewReader("x"), 1)
	if !errors.Is(err, object.ErrTransient) || !strings.Contains(err.Error(), "gave up after 5 attempts") {
		t.Fatalf("Put: %v", err)
	}
	if retries.Load() != 4 || in.Fired() != 5 {
		t.Fatalf("%d retries, %d faults; want 4 and 5", retries.Load(), in.Fired())
	}
}

func TestMaxElapsed(t *testing.T) {
	p := retry.Policy{MaxAttempts: 1000, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, MaxElapsed: 20 * time.Millisecond}
	s, _, retries := newStore(t, p, faulty.Rule{Kind: faulty.Throttle})
	_, err := s.Head(ctx, "k")
	if !errors.Is(err, object.ErrThrottled) || retries.Load() >= 999 {
		t.Fatalf("Head: %v after %d retries", err, retries.Load())
	}
}

func TestStormPasses(t *testing.T) {
	s, _, retries := newStore(t, fast, faulty.Rule{Kind: faulty.Throttle, Times: 6})
	if _, err := s.Put(ctx, "k", strings.NewReader("x"), 1); err != nil {
		t.Fatalf("Put through a storm of 6 faults: %v", err)
	}
	if retries.Load() != 6 {
		t.Fatalf("%d retries, want 6", retries.Load())
	}
}

func TestAttemptTimeout(t *testing.T) {
	p := fast
	p.AttemptTimeout = 5 * time.Millisecond
	hang := faulty.Rule{Kind: faulty.Timeout, Times: 2} // until the attempt is cancelled
	// localfs, unlike mem, stops reading when its context is cancelled.
	fs, err := localfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := faulty.NewInjector(1)
	var retries atomic.Int64
	p.OnRetry = func(object.Op, string, int, error) { retries.Add(1) }
	s := retry.New(faulty.New(fs, in), p)
	data := objtest.Data(1, 100)
	if _, err := s.Put(ctx, "k", bytes.NewReader(data), 100); err != nil {
		t.Fatal(err)
	}
	in.Set(hang)
	if _, err := s.Head(ctx, "missing"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head after two hung attempts: %v", err)
	}
	in.Set(hang)
	rc, err := s.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatalf("Get after two hung attempts: %v", err)
	}
	defer rc.Close()
	// Not synchronisation: the attempt timeout must pass, and the reader
	// must outlive it.
	time.Sleep(4 * p.AttemptTimeout)
	if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	// At least the four hung attempts were retried; on a loaded machine an
	// attempt that did not hang may outlive 5 ms too.
	if retries.Load() < 4 {
		t.Fatalf("%d retries, want at least 4", retries.Load())
	}
}

// A Get whose body keeps breaking resumes each time after the last byte.
func TestGetResumes(t *testing.T) {
	s, in, _ := newStore(t, fast)
	data := objtest.Data(2, 10000)
	if _, err := s.Put(ctx, "k", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	in.Set(faulty.Rule{Kind: faulty.ShortRead, Bytes: 700})
	for _, r := range []struct{ off, length int64 }{{0, -1}, {123, 5000}, {9000, -1}} {
		rc, err := s.Get(ctx, "k", r.off, r.length)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		end := int64(len(data))
		if r.length >= 0 {
			end = r.off + r.length
		}
		if err != nil || !bytes.Equal(got, data[r.off:end]) {
			t.Fatalf("Get(%d, %d) = %d bytes, %v", r.off, r.length, len(got), err)
		}
	}
	if in.Fired() < 10 {
		t.Fatalf("only %d short reads", in.Fired())
	}
}

// A read that breaks without progress every time gives up, not loops.
func TestGetGivesUpWithoutProgress(t *testing.T) {
	p := fast
	p.MaxAttempts = 4
	s, in, _ := newStore(t, p)
	if _, err := s.Put(ctx, "k", strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	in.Set(faulty.Rule{Kind: faulty.ShortRead, Bytes: -1})
	rc, err := s.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read: %v", err)
	}
	if in.Fired() != 4 {
		t.Fatalf("%d attempts, want 4", in.Fired())
	}
}

// A Complete whose response was lost is retried, finds the upload gone, and
// sees that the object is there.
func TestCompleteAfterLostResponse(t *testing.T) {
	s, _, retries := newStore(t, fast, faulty.Rule{Kind: faulty.Error, After: true, Times: 1,
		Ops: []object.Op{object.OpCompleteMultipart}})
	data := objtest.Data(3, 2*object.MinPartSize)
	o := object.ParallelOptions{PartSize: object.MinPartSize}
	if err := object.PutParallel(ctx, s, "k", bytes.NewReader(data), int64(len(data)), o); err != nil {
		t.Fatalf("PutParallel: %v", err)
	}
	if retries.Load() != 1 {
		t.Fatalf("%d retries, want 1", retries.Load())
	}
}

// A body that can be read only once, too large to copy, gets one attempt.
func TestUnreplayableBody(t *testing.T) {
	p := fast
	p.BufferLimit = 10
	s, _, retries := newStore(t, p, faulty.Rule{Kind: faulty.Error, Times: 1})
	body := struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 100))}
	if _, err := s.Put(ctx, "k", body, 100); !errors.Is(err, object.ErrTransient) {
		t.Fatalf("Put: %v", err)
	}
	if retries.Load() != 0 {
		t.Fatalf("%d retries of a body that cannot be sent again", retries.Load())
	}
}

// A seekable body is sent from its current position, each attempt.
func TestBodyFromPosition(t *testing.T) {
	s, _, _ := newStore(t, fast, faulty.Rule{Kind: faulty.Error, Times: 2})
	r := strings.NewReader("skip-body")
	r.Seek(5, io.SeekStart)
	if _, err := s.Put(ctx, "k", r, 4); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, _ := io.ReadAll(rc); string(got) != "body" {
		t.Fatalf("stored %q, want %q", got, "body")
	}
}
