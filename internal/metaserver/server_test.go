package metaserver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
)

// fakeClock is a settable clock for lease tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func startWithClock(t *testing.T) (*testcluster.InProcess, *fakeClock) {
	clock := &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = clock.Now
		cfg.LeaseSoftLimit, cfg.LeaseHardLimit = time.Minute, 20*time.Minute
	})
	return svc, clock
}

func TestLeaseHardLimitClosesAbandonedFile(t *testing.T) {
	ctx := context.Background()
	svc, clock := startWithClock(t)
	writer := testcluster.Client(t, svc.Addr, "")
	if _, err := writer.Create(ctx, "/abandoned", client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(19 * time.Minute)
	if err := svc.Member.RunJob(ctx, metaserver.JobLeases); err != nil {
		t.Fatal(err)
	}
	if st, _ := writer.Stat(ctx, "/abandoned"); !st.UnderConstruction {
		t.Fatal("closed before the hard limit")
	}
	clock.Advance(2 * time.Minute)
	if err := svc.Member.RunJob(ctx, metaserver.JobLeases); err != nil {
		t.Fatal(err)
	}
	if st, _ := writer.Stat(ctx, "/abandoned"); st.UnderConstruction {
		t.Fatal("still open after the hard limit")
	}
}

func TestLeaseSoftLimitLetsAnotherWriterTakeOver(t *testing.T) {
	ctx := context.Background()
	svc, clock := startWithClock(t)
	first := testcluster.Client(t, svc.Addr, "")
	second := testcluster.Client(t, svc.Addr, "")
	if _, err := first.Create(ctx, "/f", client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Create(ctx, "/f", client.CreateOptions{Overwrite: true}); !errors.Is(err, fserr.ErrLeaseConflict) {
		t.Fatalf("inside the soft limit: %v", err)
	}
	clock.Advance(2 * time.Minute)
	w, err := second.Create(ctx, "/f", client.CreateOptions{Overwrite: true})
	if err != nil {
		t.Fatalf("after the soft limit: %v", err)
	}
	if _, err := w.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRecursiveDeleteOfLargeTreeIsPurgedInBatches(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, func(cfg *metaserver.Config) { cfg.PurgeBatch = 100 })
	c := testcluster.Client(t, svc.Addr, "")
	for i := range 30 {
		for j := range 40 {
			if err := c.WriteFile(ctx, fmt.Sprintf("/tree/d%02d/f%02d", i, j), []byte("x"), client.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Mkdirs(ctx, "/kept", 0o755); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Delete(ctx, "/tree", true); err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, err := c.Stat(ctx, "/tree/d00/f00"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("deleted tree still visible: %v", err)
	}
	if err := svc.Member.RunJob(ctx, metaserver.JobPurge); err != nil {
		t.Fatal(err)
	}
	sum, err := c.ContentSummary(ctx, "/")
	if err != nil || sum.FileCount != 0 || sum.DirectoryCount != 2 {
		t.Fatalf("after purge: %+v %v", sum, err)
	}
}

// The service restarts on its own data and finds every acknowledged
// operation, including those applied since the log was last compacted.
func TestRestartKeepsState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := testcluster.StartDev(t, dir)
	c := testcluster.Client(t, p.Addr, "")
	for i := range 50 {
		if _, err := c.Mkdirs(ctx, fmt.Sprintf("/r/d%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.Stop()
	p = testcluster.StartDev(t, dir)
	c = testcluster.Client(t, p.Addr, "")
	sum, err := c.ContentSummary(ctx, "/r")
	if err != nil || sum.DirectoryCount != 51 {
		t.Fatalf("after restart: %+v %v", sum, err)
	}
}
