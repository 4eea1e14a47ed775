package metaserver_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/lincheck"
	"github.com/stratafs/strata/internal/testcluster"
)

// The history checked for linearizability: clients work on a few groups of
// directories, each a partition of lincheck's model.

// history records operations from several goroutines.
type history struct {
	lincheck.History
	acked atomic.Int64
}

// do runs one operation through c and records it.
func (h *history) do(ctx context.Context, t *testing.T, c *client.Client, clientID int, in lincheck.Input) {
	id := h.Call(clientID, in)
	out, err := (&lincheck.Runner{C: c}).Do(ctx, in)
	if err != nil {
		t.Errorf("unexpected answer: %v", err)
	}
	h.Return(clientID, id, out)
	if !out.Unknown {
		h.acked.Add(1)
	}
}

// waitAcked polls until n more operations were answered.
func (h *history) waitAcked(t *testing.T, n int64) {
	t.Helper()
	target := h.acked.Load() + n
	deadline := time.Now().Add(2 * time.Minute)
	for h.acked.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d operations answered within 2 minutes", h.acked.Load(), target)
		}
		time.Sleep(5 * time.Millisecond) // polling the load's progress, not synchronising
	}
}

// TestLinearizableAcrossFailures runs concurrent clients against a group of
// three real processes while members are killed and restarted: the leader,
// a follower, two members in turn (the group stalls without a quorum), and
// all three at once. The recorded history, closed by a read of every
// directory, must be linearizable.
func TestLinearizableAcrossFailures(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	admin := g.Client("")
	const groups, perGroup = 3, 2
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range groups {
		if _, err := admin.Mkdirs(ctx, lincheck.Root(i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &history{}
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for id := range groups * perGroup {
		c := g.Client("")
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(id), 7))
			for load.Err() == nil {
				h.do(load, t, c, id, lincheck.Random(r, id%groups, 0, false))
			}
		}()
	}
	leader := func() int {
		l, err := g.Leader(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	h.waitAcked(t, 100)

	l := leader()
	t.Logf("kill -9 the leader, member %d", l)
	g.Kill(l)
	h.waitAcked(t, 100)
	g.Start(l)

	f := l%3 + 1
	if f == leader() {
		f = f%3 + 1
	}
	t.Logf("kill -9 a follower, member %d", f)
	g.Kill(f)
	h.waitAcked(t, 100)
	g.Start(f)

	a := leader()
	b := a%3 + 1
	t.Logf("kill -9 member %d, then member %d: no quorum until %d is back", a, b, a)
	g.Kill(a)
	h.waitAcked(t, 50)
	g.Kill(b)
	g.Start(a)
	h.waitAcked(t, 50)
	g.Start(b)

	t.Log("kill -9 all three, then restart them")
	for i := 1; i <= 3; i++ {
		g.Kill(i)
	}
	for i := 1; i <= 3; i++ {
		g.Start(i)
	}
	h.waitAcked(t, 100)
	stopLoad()
	wg.Wait()

	// The closing reads see every acknowledged operation, or the check fails.
	for grp := range groups {
		for s := range lincheck.Slots {
			h.do(ctx, t, admin, groups*perGroup, lincheck.Input{Group: grp, Kind: lincheck.Stat, A: s})
		}
	}
	called, answered, unknown := h.Counts()
	t.Logf("%d operations, %d answered, %d without an answer", called, answered, unknown)
	dir := t.TempDir()
	if res, err := h.Check(time.Minute, dir); res != porcupine.Ok {
		t.Fatalf("the history is not linearizable (%v; in %s: history.html, history.jsonl %v)", res, dir, err)
	}
}
