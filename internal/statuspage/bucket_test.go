package statuspage_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/metrics"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/metered"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/statuspage"
)

// bucketFaults makes bucket requests fail, some for good and some until a
// retry, through the retry layer and a process's bucket meter as
// objstore.Metered wires them, then reads the families off /metrics.
func bucketFaults(t *testing.T) scrape {
	t.Helper()
	p := metrics.NewProcess(slog.Default(), time.Second)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := statuspage.Serve(statuspage.Config{Registry: p.Registry}, lis)
	t.Cleanup(func() { srv.Close() })
	inj := faulty.NewInjector(1)
	policy := retry.Policy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond,
		OnRetry: func(op object.Op, _ string, _ int, err error) { p.Bucket.Retry(op, err) }}
	store := retry.New(metered.New(faulty.New(mem.New(), inj), p.Bucket), policy)
	ctx := context.Background()
	inj.Set(faulty.Rule{Kind: faulty.Throttle, Ops: []object.Op{object.OpPut}, Times: 2})
	if _, err := store.Put(ctx, "k", strings.NewReader("v"), 1); err != nil {
		t.Fatalf("a put retried past two throttles: %v", err)
	}
	if _, err := store.Head(ctx, "missing"); !errors.Is(err, object.ErrNotFound) {
		t.Fatalf("head of a missing key: %v", err)
	}
	s, _ := get(t, srv.Addr)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"strata_bucket_requests_total", []string{"op=put"}, 3},
		{"strata_bucket_request_errors_total", []string{"op=put", "class=throttled"}, 2},
		{"strata_bucket_retries_total", []string{"op=put", "class=throttled"}, 2},
		{"strata_bucket_request_errors_total", []string{"op=head", "class=not_found"}, 1},
		{"strata_bucket_retries_total", []string{"op=head"}, 0},
		{"strata_bucket_request_duration_seconds", []string{"op=put"}, 3},
	} {
		if v, _ := s.lookup(tc.name, tc.labels...); v != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, v, tc.want)
		}
	}
	return s
}

func TestBucketErrorsAndRetries(t *testing.T) { bucketFaults(t) }
