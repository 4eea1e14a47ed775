package metaserver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// The history checked for linearizability: clients work on a few groups of
// directories, each a partition of the model. A directory's permission
// bits are its value, so mkdir, chmod, rename, delete and stat are each one
// Raft command or one read, with answers the model predicts exactly.

const slots = 3 // directories per group

type opKind uint8

const (
	opMkdir opKind = iota
	opChmod
	opRename
	opDelete
	opStat
)

type fsInput struct {
	group int
	kind  opKind
	a, b  int    // slots (b: rename's destination)
	perm  uint32 // mkdir, chmod
}

type fsOutput struct {
	unknown bool // the call failed without an answer: it may or may not have happened
	ok      bool // mkdir created, chmod/rename/delete applied
	perm    int  // stat: the permission, or -1 for a missing directory
}

// groupState is one group's directories: permission, or -1 when absent.
type groupState [slots]int

func stepFS(state, input, output any) (bool, any) {
	st, in, out := state.(groupState), input.(fsInput), output.(fsOutput)
	next, ok := st, false
	switch in.kind {
	case opMkdir:
		if ok = st[in.a] < 0; ok {
			next[in.a] = int(in.perm)
		}
	case opChmod:
		if ok = st[in.a] >= 0; ok {
			next[in.a] = int(in.perm)
		}
	case opRename:
		if ok = st[in.a] >= 0 && st[in.b] < 0; ok {
			next[in.b], next[in.a] = st[in.a], -1
		}
	case opDelete:
		if ok = st[in.a] >= 0; ok {
			next[in.a] = -1
		}
	case opStat:
		return out.unknown || out.perm == st[in.a], st
	}
	if out.unknown {
		return true, next // linearized where it would have taken effect; unobserved if never
	}
	return out.ok == ok, next
}

var fsModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byGroup := map[int][]porcupine.Operation{}
		for _, op := range h {
			g := op.Input.(fsInput).group
			byGroup[g] = append(byGroup[g], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byGroup {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return groupState{-1, -1, -1} },
	Step: stepFS,
	DescribeOperation: func(input, output any) string {
		in, out := input.(fsInput), output.(fsOutput)
		return fmt.Sprintf("g%d %v(%d,%d,%o) -> %+v", in.group, in.kind, in.a, in.b, in.perm, out)
	},
}

// history records operations from several goroutines.
type history struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	acked atomic.Int64
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

// do runs one operation through c and records it.
func (h *history) do(ctx context.Context, t *testing.T, c *client.Client, clientID int, in fsInput) {
	dir := func(i int) string { return fmt.Sprintf("/g%d/d%d", in.group, i) }
	call := h.now()
	var out fsOutput
	var err error
	switch in.kind {
	case opMkdir:
		out.ok, err = c.Mkdir(ctx, dir(in.a), in.perm)
	case opChmod:
		err = c.SetPermission(ctx, dir(in.a), in.perm)
		out.ok = err == nil
	case opRename:
		err = c.Rename2(ctx, dir(in.a), dir(in.b), false)
		out.ok = err == nil
	case opDelete:
		out.ok, err = c.Delete(ctx, dir(in.a), false)
	case opStat:
		var st *client.FileStatus
		if st, err = c.Stat(ctx, dir(in.a)); err == nil {
			out.perm = int(st.Perm & 0o777)
		} else {
			out.perm = -1
		}
	}
	ret := h.now()
	switch {
	case err == nil:
	case errors.Is(err, fserr.ErrNotFound) || errors.Is(err, fserr.ErrExists):
		err = nil // an answer: the model predicts it
	case isAnswer(err):
		t.Errorf("%+v: unexpected answer %v", in, err)
	default:
		out, ret = fsOutput{unknown: true}, math.MaxInt64
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: clientID, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
	if !out.unknown {
		h.acked.Add(1)
	}
}

// isAnswer tells a file system answer from a failure to get one.
func isAnswer(err error) bool {
	var fe *fserr.Error
	return errors.As(err, &fe) && !errors.Is(err, fserr.ErrUnavailable) && !errors.Is(err, fserr.ErrNotLeader)
}

func randomInput(r *rand.Rand, group int) fsInput {
	in := fsInput{group: group, kind: opKind(r.IntN(5)), a: r.IntN(slots), perm: uint32(r.IntN(0o1000))}
	in.b = (in.a + 1 + r.IntN(slots-1)) % slots
	return in
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
		if _, err := admin.Mkdirs(ctx, fmt.Sprintf("/g%d", i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &history{start: time.Now()}
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for id := range groups * perGroup {
		c := g.Client("")
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(id), 7))
			for load.Err() == nil {
				h.do(load, t, c, id, randomInput(r, id%groups))
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
		for s := range slots {
			h.do(ctx, t, admin, groups*perGroup, fsInput{group: grp, kind: opStat, a: s})
		}
	}
	unknown := 0
	for _, op := range h.ops {
		if op.Output.(fsOutput).unknown {
			unknown++
		}
	}
	t.Logf("%d operations, %d answered, %d without an answer", len(h.ops), h.acked.Load(), unknown)
	res, info := porcupine.CheckOperationsVerbose(fsModel, h.ops, time.Minute)
	if res != porcupine.Ok {
		path := t.TempDir() + "/history.html"
		if err := porcupine.VisualizePath(fsModel, info, path); err == nil {
			t.Logf("visualization: %s", path)
		}
		t.Fatalf("the history is not linearizable (%v)", res)
	}
}
