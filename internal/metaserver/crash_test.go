package metaserver_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// crashWorker runs a stream of operations in its own directory and keeps a
// model of what the directory must hold: every acknowledged operation, plus
// the one that was in flight when the service died, which may or may not
// have been applied.
type crashWorker struct {
	dir      string
	k        int
	model    map[string]string // name -> content, or "<dir>"
	inflight *crashOp          // the unacknowledged last operation
}

type crashOp struct {
	desc  string
	apply func(m map[string]string) // the operation's effect on the model
	// partial, if set, is an allowed half-way state (a file created but not
	// yet completed, which HDFS semantics make visible, empty and open).
	partial func(m map[string]string)
}

const dirMark = "<dir>"

// next returns the worker's next operation.
func (w *crashWorker) next() (crashOp, func(ctx context.Context, c *client.Client) error) {
	w.k++
	k := w.k
	f, g := fmt.Sprintf("f%05d", k), fmt.Sprintf("g%05d", k)
	switch {
	case k%7 == 0 && w.model[fmt.Sprintf("g%05d", k-3)] != "":
		old := fmt.Sprintf("g%05d", k-3)
		return crashOp{desc: "delete " + old, apply: func(m map[string]string) { delete(m, old) }},
			func(ctx context.Context, c *client.Client) error {
				ok, err := c.Delete(ctx, w.dir+"/"+old, true)
				if err == nil && !ok {
					return fmt.Errorf("delete %s: reported missing", old)
				}
				return err
			}
	case k%5 == 0:
		d, e := fmt.Sprintf("d%05d", k), fmt.Sprintf("e%05d", k)
		return crashOp{desc: "mkdir+rename dir " + d, apply: func(m map[string]string) { m[e] = dirMark }, partial: func(m map[string]string) { m[d] = dirMark }},
			func(ctx context.Context, c *client.Client) error {
				if _, err := c.Mkdirs(ctx, w.dir+"/"+d+"/sub", 0o755); err != nil {
					return err
				}
				return c.Rename2(ctx, w.dir+"/"+d, w.dir+"/"+e, false)
			}
	case k%2 == 0 && w.model[fmt.Sprintf("f%05d", k-1)] != "":
		src, dst := fmt.Sprintf("f%05d", k-1), g
		return crashOp{desc: "rename " + src, apply: func(m map[string]string) { m[dst] = m[src]; delete(m, src) }},
			func(ctx context.Context, c *client.Client) error {
				return c.Rename2(ctx, w.dir+"/"+src, w.dir+"/"+dst, false)
			}
	default:
		content := fmt.Sprintf("%s/%s written by op %d", w.dir, f, k)
		return crashOp{desc: "create " + f, apply: func(m map[string]string) { m[f] = content }, partial: func(m map[string]string) { m[f] = "" }},
			func(ctx context.Context, c *client.Client) error {
				return c.WriteFile(ctx, w.dir+"/"+f, []byte(content), client.CreateOptions{})
			}
	}
}

// run performs operations until one fails, which happens when the service
// is killed; acked counts acknowledged operations across workers.
func (w *crashWorker) run(ctx context.Context, c *client.Client, acked *atomic.Int64) {
	for ctx.Err() == nil {
		op, do := w.next()
		w.inflight = &op
		if err := do(ctx, c); err != nil {
			return
		}
		op.apply(w.model)
		w.inflight = nil
		acked.Add(1)
	}
}

// verify compares the directory with the model, allowing the in-flight
// operation to be absent, complete or (where defined) half-way, and adopts
// what it finds as the new model.
func (w *crashWorker) verify(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	got := map[string]string{}
	err := c.List(ctx, w.dir, func(st *client.FileStatus) error {
		if st.IsDir {
			got[st.Name] = dirMark
			return nil
		}
		data, err := c.ReadFile(ctx, st.Path)
		got[st.Name] = string(data)
		return err
	})
	if err != nil {
		t.Fatalf("%s: list: %v", w.dir, err)
	}
	candidates := []map[string]string{maps.Clone(w.model)}
	if op := w.inflight; op != nil {
		after := maps.Clone(w.model)
		op.apply(after)
		candidates = append(candidates, after)
		if op.partial != nil {
			half := maps.Clone(w.model)
			op.partial(half)
			candidates = append(candidates, half)
		}
	}
	for _, want := range candidates {
		if maps.Equal(got, want) {
			w.model, w.inflight = got, nil
			w.checkSummary(t, ctx, c)
			return
		}
	}
	t.Fatalf("%s after restart (in flight: %v):\n got  %v\n want %v", w.dir, w.inflight, keys(got), keys(candidates[0]))
}

// checkSummary checks that the directory's aggregates agree with its content.
func (w *crashWorker) checkSummary(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	var files, dirs, length uint64
	for _, v := range w.model {
		if v == dirMark {
			dirs += 2 // the renamed directory and its "sub"
		} else {
			files++
			length += uint64(len(v))
		}
	}
	sum, err := c.ContentSummary(ctx, w.dir)
	if err != nil {
		t.Fatal(err)
	}
	// A half-way mkdir+rename leaves d with its sub, counted the same way.
	if sum.FileCount != files || sum.DirectoryCount != dirs+1 || sum.Length != length {
		t.Fatalf("%s: summary %+v, content has %d files, %d dirs, %d bytes", w.dir, *sum, files, dirs+1, length)
	}
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// TestKillDuringLoad kills the service with SIGKILL while clients create,
// rename and delete concurrently, restarts it, and checks that every
// acknowledged operation survived and nothing else is half-applied.
func TestKillDuringLoad(t *testing.T) {
	dataDir := t.TempDir()
	const workers, rounds = 8, 3
	ws := make([]*crashWorker, workers)
	for i := range ws {
		ws[i] = &crashWorker{dir: fmt.Sprintf("/w%d", i), model: map[string]string{}}
	}
	for round := range rounds {
		p := testcluster.StartDev(t, dataDir)
		c := testcluster.Client(t, p.Addr, "")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		for _, w := range ws {
			if round == 0 {
				if _, err := c.Mkdirs(ctx, w.dir, 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				w.verify(t, ctx, c)
			}
		}
		var acked atomic.Int64
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(ctx, testcluster.Client(t, p.Addr, ""), &acked)
			}()
		}
		target := int64(300 * (round + 1))
		for acked.Load() < target && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // polling the load's progress, not synchronising
		}
		p.Kill()
		cancel() // clients would look for the service again until their retry timeout
		wg.Wait()
		if acked.Load() < target {
			t.Fatalf("round %d: only %d operations acknowledged", round, acked.Load())
		}
	}
	p := testcluster.StartDev(t, dataDir)
	c := testcluster.Client(t, p.Addr, "")
	for _, w := range ws {
		w.verify(t, context.Background(), c)
	}
}
