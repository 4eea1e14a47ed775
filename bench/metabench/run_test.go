package metabench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// service is one in-process member shared by the tests of this file; each
// test works under a base directory of its own.
var service struct {
	emb  *Embedded
	addr string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "metabench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	service.emb, err = StartEmbedded(context.Background(), dir, false, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the embedded member:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	service.addr = service.emb.Addr()
	code := m.Run()
	if err := service.emb.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err) // NB: see Embedded.Close
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func newClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Meta: service.addr, Token: service.emb.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testConfig(t *testing.T, ops string, threads ...int) Config {
	t.Helper()
	o, err := ParseOps(ops)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Clients: []*client.Client{newClient(t), newClient(t)}, Target: "test",
		Dir: "/" + strings.ReplaceAll(t.Name(), "/", "_"), Threads: threads, Files: 7, Ops: o, ListPasses: 2}
}

func TestRunEveryOp(t *testing.T) {
	cfg := testConfig(t, "mkdir,create,stat,list,rename,delete,create512,open,stat,delete", 1, 3)
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var got []string
	for _, r := range rep.Results {
		got = append(got, fmt.Sprintf("%s/%d", r.Op, r.Threads))
		want := int64(cfg.Files)
		if r.Op == OpList {
			// Each thread's directory holds its share of the mkdir
			// phase's directories and of the create phase's files.
			want = int64(cfg.ListPasses * r.Threads)
			if r.Entries != int64(cfg.ListPasses*2*cfg.Files) {
				t.Errorf("list/%d: %d entries, want %d", r.Threads, r.Entries, cfg.ListPasses*2*cfg.Files)
			}
		}
		if r.Ops != want || r.Errors != 0 || r.FirstError != "" {
			t.Errorf("%s/%d: %d ops, %d errors (%s); want %d ops", r.Op, r.Threads, r.Ops, r.Errors, r.FirstError, want)
		}
		if l := r.Latency; l.P50 <= 0 || l.P50 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s/%d: latencies out of order: %+v", r.Op, r.Threads, l)
		}
	}
	ops := "mkdir create stat list rename delete create512 open stat delete"
	var want []string
	for _, n := range cfg.Threads {
		for _, op := range strings.Fields(ops) {
			want = append(want, fmt.Sprintf("%s/%d", op, n))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("phases %v, want %v", got, want)
	}
	if rep.Service.Role == "" || rep.Params.Conns != 2 || rep.Machine.CPUs < 1 {
		t.Errorf("report header: %+v %+v %+v", rep.Service, rep.Params, rep.Machine)
	}
	if _, err := cfg.Clients[0].Stat(context.Background(), cfg.Dir); !errors.Is(err, fserr.ErrNotFound) {
		t.Errorf("the base directory was not removed: %v", err)
	}
	if !strings.Contains(progress.String(), "threads 3: open: 7 ops") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

// TestRunBookkeeping checks, with --keep, that the files end up where the
// plan says: a preparation create, then two renames.
func TestRunBookkeeping(t *testing.T) {
	cfg := testConfig(t, "stat,rename,rename", 2)
	cfg.Keep = true
	var phases []string
	var mu sync.Mutex
	cfg.OnPhase = func(op Op, threads int) func() {
		mu.Lock()
		defer mu.Unlock()
		phases = append(phases, fmt.Sprintf("%s/%d", op, threads))
		return func() {
			mu.Lock()
			defer mu.Unlock()
			phases = append(phases, "end")
		}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"stat/2", "end", "rename/2", "end", "rename/2", "end"}; !slices.Equal(phases, want) {
		t.Errorf("OnPhase calls %v, want %v (the preparation is not timed)", phases, want)
	}
	if len(rep.Results) != 3 {
		t.Errorf("%d results, want 3", len(rep.Results))
	}
	c := cfg.Clients[0]
	ctx := context.Background()
	for th, want := range [][]string{{"f0-0.r2", "f0-1.r2", "f0-2.r2", "f0-3.r2"}, {"f0-0.r2", "f0-1.r2", "f0-2.r2"}} {
		list, err := c.ReadDir(ctx, fmt.Sprintf("%s/t2/%d", cfg.Dir, th))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, st := range list {
			names = append(names, st.Name)
		}
		if !slices.Equal(names, want) {
			t.Errorf("thread %d's directory holds %v, want %v", th, names, want)
		}
	}
	if _, err := Run(ctx, cfg); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second run in the same directory: %v, want an error", err)
	}
	if _, err := c.Delete(ctx, cfg.Dir, true); err != nil {
		t.Fatal(err)
	}
}

// TestRunCountsErrors removes one file behind the benchmark's back: the
// delete phase counts one failure and carries on.
func TestRunCountsErrors(t *testing.T) {
	cfg := testConfig(t, "create,delete", 1)
	victim := cfg.Dir + "/t1/0/" + newSet(OpCreate, 0).name(3)
	cfg.OnPhase = func(op Op, _ int) func() {
		if op == OpDelete {
			if _, err := cfg.Clients[1].Delete(context.Background(), victim, false); err != nil {
				t.Error(err)
			}
		}
		return func() {}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	del := rep.Results[1]
	if del.Op != OpDelete || del.Ops != 7 || del.Errors != 1 || !strings.Contains(del.FirstError, "nothing to delete") {
		t.Errorf("delete: %+v", del)
	}
	if rep.Errors() != 1 {
		t.Errorf("Errors() = %d, want 1", rep.Errors())
	}
}

// TestRunFailsFast: when every operation of a phase fails the run stops.
func TestRunFailsFast(t *testing.T) {
	cfg := testConfig(t, "create,stat,delete", 1, 2)
	cfg.OnPhase = func(op Op, n int) func() {
		if op == OpStat {
			if _, err := cfg.Clients[0].Delete(context.Background(), fmt.Sprintf("%s/t%d", cfg.Dir, n), true); err != nil {
				t.Error(err)
			}
		}
		return func() {}
	}
	rep, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "every stat failed") {
		t.Fatalf("err = %v", err)
	}
	if len(rep.Results) != 2 || rep.Results[1].Errors != 7 {
		t.Errorf("results: %+v", rep.Results)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	good := testConfig(t, "create", 1)
	for name, mutate := range map[string]func(*Config){
		"no clients":   func(c *Config) { c.Clients = nil },
		"relative dir": func(c *Config) { c.Dir = "bench" },
		"no threads":   func(c *Config) { c.Threads = nil },
		"zero threads": func(c *Config) { c.Threads = []int{0} },
		"no files":     func(c *Config) { c.Files = 0 },
		"no ops":       func(c *Config) { c.Ops = nil },
	} {
		cfg := good
		mutate(&cfg)
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// An embedded member with TLS (bench meta --embedded-tls) serves every
// transport a client uses over it: the calls (callwire) as the contact
// (gRPC).
func TestEmbeddedOverTLS(t *testing.T) {
	ctx := context.Background()
	files, server := testcluster.DevTLS(t)
	emb, err := StartEmbedded(ctx, t.TempDir(), false, server)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	clientTLS, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{Meta: emb.Addr(), Token: emb.Token(), TLS: clientTLS})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Mkdirs(ctx, "/over-tls", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, "/over-tls"); err != nil {
		t.Fatal(err)
	}
}
