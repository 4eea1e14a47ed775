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
	"github.com/stratafs/strata/internal/testcluster"
)

// Creates racing for the last names of a quota, from many threads over
// several connections to a real `strata meta`: exactly as many succeed as
// the quota leaves room for, every other one is refused with the quota's
// error (and nothing else), and the directory holds no more than its quota.
// The checks run in the state machine's apply, one entry after another,
// so no interleaving of proposals can pass two creates through one gap.
func TestQuotaEdgeUnderConcurrentCreates(t *testing.T) {
	g := testcluster.StartGroup(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := g.Client("")
	if _, err := admin.Mkdirs(ctx, "/q", 0o777); err != nil {
		t.Fatal(err)
	}
	const room, threads, each = 37, 16, 8 // 128 creates for 37 names
	if err := admin.SetQuota(ctx, "/q", 1+room, client.NoQuota); err != nil {
		t.Fatal(err)
	}
	clients := []*client.Client{admin, g.Client(""), g.Client("")}
	var mu sync.Mutex
	created, refused := 0, 0
	var others []error
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clients[i%len(clients)]
			for j := range each {
				err := c.WriteFile(ctx, fmt.Sprintf("/q/f%d-%d", i, j), nil, client.CreateOptions{})
				mu.Lock()
				switch {
				case err == nil:
					created++
				case errors.Is(err, fserr.ErrNSQuotaExceeded) && fserr.IsQuota(err):
					refused++
				default:
					others = append(others, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(others) > 0 {
		t.Fatalf("creates failed other than by the quota: %v", others)
	}
	if created != room || refused != threads*each-room {
		t.Fatalf("%d created and %d refused; want %d and %d", created, refused, room, threads*each-room)
	}
	sum, err := admin.ContentSummary(ctx, "/q")
	if err != nil {
		t.Fatal(err)
	}
	if sum.FileCount != room || sum.DirectoryCount != 1 || sum.Quota == nil || sum.Quota.Names != 1+room {
		t.Fatalf("content summary %+v (quota %+v); want %d files under a quota of %d", sum, sum.Quota, room, 1+room)
	}
}

// A quota is state of the namespace, replicated: after the leader is
// killed, the member that leads next refuses what the quota refuses,
// frees what a delete frees, and reports the same quota.
func TestQuotaHoldsAcrossFailover(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := g.Client("")
	if _, err := c.Mkdirs(ctx, "/q", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.SetQuota(ctx, "/q", 4, 100); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := c.WriteFile(ctx, fmt.Sprintf("/q/f%d", i), nil, client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	old, err := g.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.Kill(old)
	if _, err := c.Mkdirs(ctx, "/q/d", 0o755); !errors.Is(err, fserr.ErrNSQuotaExceeded) {
		t.Fatalf("mkdir past the name quota after member %d (the leader) was killed: %v; want the quota's refusal", old, err)
	}
	if now, err := g.Leader(ctx); err != nil || now == old {
		t.Fatalf("leader after the kill: %d, %v; want another than %d", now, err, old)
	}
	if _, err := c.Delete(ctx, "/q/f0", false); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "/q/big", make([]byte, 101), client.CreateOptions{}); !errors.Is(err, fserr.ErrDSQuotaExceeded) {
		t.Fatalf("write past the space quota on the new leader: %v; want the quota's refusal", err)
	}
	if err := c.WriteFile(ctx, "/q/small", make([]byte, 100), client.CreateOptions{}); err != nil {
		t.Fatalf("a write the space quota leaves room for: %v", err)
	}
	sum, err := c.ContentSummary(ctx, "/q")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Quota == nil || sum.Quota.Names != 4 || sum.Quota.Space != 100 || sum.FileCount != 3 || sum.Length != 100 {
		t.Fatalf("content summary after the failover %+v (quota %+v); want 3 files, 100 bytes, quotas 4 and 100", sum, sum.Quota)
	}
}
