package faulty_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/objtest"
)

var ctx = context.Background()

func put(s object.Store, key string) error {
	_, err := s.Put(ctx, key, strings.NewReader("data"), 4)
	return err
}

// With no rules the wrapper is transparent, multipart included.
func TestConformanceNoFaults(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store { return faulty.New(mem.New(), faulty.NewInjector(1)) })
}

func TestStormOnAndOff(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	in.Set(faulty.Rule{Kind: faulty.Throttle})
	for range 3 {
		if err := put(s, "k"); !errors.Is(err, object.ErrThrottled) || !object.IsRetryable(err) {
			t.Fatalf("Put during the storm: %v, want a retryable ErrThrottled", err)
		}
	}
	in.Clear()
	if err := put(s, "k"); err != nil {
		t.Fatalf("Put after the storm: %v", err)
	}
	if in.Fired() != 3 {
		t.Fatalf("Fired = %d, want 3", in.Fired())
	}
}

func TestEveryAndTimes(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	sentinel := errors.New("boom")
	in.Set(faulty.Rule{Kind: faulty.Error, Err: sentinel, Every: 3, Times: 2})
	var failed []int
	for i := 1; i <= 10; i++ {
		if err := put(s, "k"); errors.Is(err, sentinel) {
			failed = append(failed, i)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if len(failed) != 2 || failed[0] != 3 || failed[1] != 6 {
		t.Fatalf("failed calls %v, want [3 6]", failed)
	}
}

func TestProbabilityIsSeeded(t *testing.T) {
	run := func() []bool {
		in := faulty.NewInjector(42)
		in.Set(faulty.Rule{Kind: faulty.Error, Prob: 0.5})
		s := faulty.New(mem.New(), in)
		var out []bool
		for range 64 {
			out = append(out, put(s, "k") != nil)
		}
		return out
	}
	a, b := run(), run()
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("call %d differs between runs with one seed", i)
		}
		if a[i] {
			fails++
		}
	}
	if fails == 0 || fails == len(a) {
		t.Fatalf("%d of %d calls failed at probability 0.5", fails, len(a))
	}
}

func TestMatchOpAndPrefix(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	in.Set(faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpPut}, Prefix: "bad/"})
	if err := put(s, "good/k"); err != nil {
		t.Fatalf("Put outside the prefix: %v", err)
	}
	if err := put(s, "bad/k"); !errors.Is(err, object.ErrTransient) {
		t.Fatalf("Put inside the prefix: %v, want ErrTransient", err)
	}
	if _, err := s.Head(ctx, "bad/k"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head is not a Put, so no fault: %v", err)
	}
}

// After: the operation happens, the caller is told it failed.
func TestAfter(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	in.Set(faulty.Rule{Kind: faulty.Error, After: true, Ops: []object.Op{object.OpPut}})
	if err := put(s, "k"); err == nil {
		t.Fatal("Put succeeded")
	}
	if _, err := s.Head(ctx, "k"); err != nil {
		t.Fatalf("the failed Put did not happen: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	in.Set(faulty.Rule{Kind: faulty.Timeout, Ops: []object.Op{object.OpHead}})
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.Head(tctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Head hanging until the deadline: %v", err)
	}
	in.Set(faulty.Rule{Kind: faulty.Timeout, Delay: time.Millisecond})
	if _, err := s.Head(ctx, "k"); !errors.Is(err, object.ErrTimeout) || !object.IsRetryable(err) {
		t.Fatalf("Head with a 1ms timeout: %v, want a retryable ErrTimeout", err)
	}
}

func TestShortRead(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	data := objtest.Data(1, 1000)
	if _, err := s.Put(ctx, "k", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	in.Set(faulty.Rule{Kind: faulty.ShortRead, Bytes: 10})
	rc, err := s.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if !bytes.Equal(got, data[:10]) || !errors.Is(err, io.ErrUnexpectedEOF) || !object.IsRetryable(err) {
		t.Fatalf("short read gave %d bytes and %v; want 10 and a retryable unexpected EOF", len(got), err)
	}
}

func TestLatencyCombines(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	in.Set(faulty.Rule{Kind: faulty.Latency, Delay: time.Microsecond},
		faulty.Rule{Kind: faulty.Throttle, Ops: []object.Op{object.OpDelete}})
	if err := put(s, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, object.ErrThrottled) {
		t.Fatalf("Delete: %v, want ErrThrottled", err)
	}
	if in.Fired() != 3 {
		t.Fatalf("Fired = %d, want 3 (two latencies, one throttle)", in.Fired())
	}
}

// The operations of cache mode take faults like the others.
func TestCacheModeOps(t *testing.T) {
	in := faulty.NewInjector(1)
	s := faulty.New(mem.New(), in)
	v, err := s.Put(ctx, "k", bytes.NewReader(objtest.Data(2, 1000)), 1000)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[object.Op]func() error{
		object.OpGet: func() error {
			_, err := s.GetVersion(ctx, "k", v.ETag, 0, -1)
			return err
		},
		object.OpListDir: func() error {
			_, _, err := s.ListDir(ctx, "", "", 0)
			return err
		},
		object.OpCopy: func() error {
			_, err := s.Copy(ctx, "k", "", "k2")
			return err
		},
		object.OpListUploads: func() error {
			_, err := s.ListUploads(ctx, "")
			return err
		},
	}
	for op, call := range calls {
		in.Set(faulty.Rule{Kind: faulty.Throttle, Ops: []object.Op{op}})
		if err := call(); !errors.Is(err, object.ErrThrottled) {
			t.Errorf("%s: %v, want ErrThrottled", op, err)
		}
		for other, call := range calls {
			if err := call(); other != op && err != nil {
				t.Errorf("%s with faults on %s only: %v", other, op, err)
			}
		}
	}
	in.Set(faulty.Rule{Kind: faulty.ShortRead, Bytes: 10})
	rc, err := s.GetVersion(ctx, "k", v.ETag, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if len(got) != 10 || !errors.Is(err, io.ErrUnexpectedEOF) || rc.Info().ETag != v.ETag {
		t.Fatalf("short GetVersion gave %d bytes, %v, %+v", len(got), err, rc.Info())
	}
}
