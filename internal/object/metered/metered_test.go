package metered_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/metered"
	"github.com/stratafs/strata/internal/object/objtest"
)

// tally is a Meter that counts requests by operation and class.
type tally struct {
	mu  sync.Mutex
	got map[string]int
}

func (m *tally) Request(op object.Op, _ time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.got == nil {
		m.got = map[string]int{}
	}
	m.got[fmt.Sprintf("%s %s", op, metered.Class(err))]++
}

func (m *tally) Retry(object.Op, error) {}

func (m *tally) count(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.got[key]
}

func TestConformance(t *testing.T) {
	objtest.Run(t, func(t *testing.T) object.Store { return metered.New(mem.New(), &tally{}) })
}

// Every request is heard once, with its operation and how it failed.
func TestRequestsAreHeardWithTheirClass(t *testing.T) {
	ctx := context.Background()
	inj := faulty.NewInjector(1)
	m := &tally{}
	s := metered.New(faulty.New(mem.New(), inj), m)
	if _, err := s.Put(ctx, "k", strings.NewReader("v"), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "missing"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("Head(missing) = %v", err)
	}
	inj.Add(faulty.Rule{Kind: faulty.Throttle, Ops: []object.Op{object.OpGet}, Times: 1})
	if _, err := s.Get(ctx, "k", 0, -1); !errors.Is(err, object.ErrThrottled) {
		t.Fatalf("Get = %v, want throttled", err)
	}
	for key, want := range map[string]int{"put ": 1, "head not_found": 1, "get throttled": 1} {
		if got := m.count(key); got != want {
			t.Errorf("%q heard %d times, want %d (all: %v)", key, got, want, m.got)
		}
	}
}

func TestClass(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{object.WrapError(object.OpGet, "k", object.ErrNotFound), "not_found"},
		{object.WrapError(object.OpGet, "k", object.ErrTimeout), "timeout"},
		{object.WrapError(object.OpGet, "k", object.ErrTransient), "transient"},
		{object.WrapError(object.OpPut, "k", object.ErrSizeMismatch), "invalid"},
		{fmt.Errorf("x: %w", context.Canceled), "canceled"},
		{errors.New("disk on fire"), "other"},
	} {
		if got := metered.Class(tc.err); got != tc.want {
			t.Errorf("Class(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
