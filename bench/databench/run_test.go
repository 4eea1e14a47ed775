package databench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cluster is one embedded cluster shared by the tests of this file; each
// test works in a Strata directory of its own.
var cluster struct {
	emb *Embedded
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "databench-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// A limited link with latency, so that the cold path goes through the
	// limiter as in a real run; fast enough to keep the tests quick.
	cluster.emb, err = StartEmbedded(context.Background(), EmbeddedConfig{Dir: dir,
		Link: Link{Bandwidth: 1 << 30, Latency: 100 * time.Microsecond}, CacheBytes: 1 << 30})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the embedded cluster:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if err := cluster.emb.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// tinyConfig is a whole run in miniature: sizes that are not multiples of
// the block, page or call sizes, so that every short end is exercised.
func tinyConfig(t *testing.T, c Cluster) Config {
	t.Helper()
	return Config{Cluster: c, Dir: "/" + strings.ReplaceAll(t.Name(), "/", "_"), RawDir: t.TempDir(),
		Files: 3, FileSize: 3<<20 + 4321, BlockSize: 1 << 20, IOSize: 300 << 10, Readers: 2, Repeat: 2,
		RandomSizes: []int{4 << 10, 64 << 10, 1 << 20}, RandomReads: 7, BlockSizes: []int64{512 << 10, 2 << 20},
		Verify: true, Seed: 42}
}

func TestRunEmbedded(t *testing.T) {
	cfg := tinyConfig(t, cluster.emb)
	var progress bytes.Buffer
	cfg.Progress = &progress
	var phases []string
	cfg.OnPhase = func(name string) func() {
		phases = append(phases, name)
		return func() {}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	data := int64(cfg.Files) * cfg.FileSize
	type key struct {
		kind  Kind
		way   Way
		size  int
		sweep bool
		bs    int64
	}
	got := map[key]*Result{}
	for _, r := range rep.Results {
		got[key{r.Kind, r.Way, r.Size, r.Sweep, r.BlockSize}] = r
		if len(r.Rounds) != cfg.Repeat || r.Elapsed <= 0 {
			t.Errorf("%s: rounds %v, elapsed %v", measurementName(r), r.Rounds, r.Elapsed)
		}
		if r.Way == WayWarm && r.Counters.RPC != 0 {
			t.Errorf("%s: %d bytes over RPC, want short-circuit only", measurementName(r), r.Counters.RPC)
		}
	}
	bs := int64(1 << 20)
	for _, k := range []key{
		{KindWrite, WayStrata, cfg.IOSize, false, bs}, {KindWrite, WayRaw, cfg.IOSize, false, 0},
		{KindSeq, WayCold, cfg.IOSize, false, bs}, {KindSeq, WayWarm, cfg.IOSize, false, bs}, {KindSeq, WayRaw, cfg.IOSize, false, 0},
		{KindDisk, WayWarm, cfg.IOSize, false, bs}, {KindDisk, WayRaw, cfg.IOSize, false, 0},
	} {
		r := got[k]
		if r == nil {
			t.Errorf("no result %+v", k)
			continue
		}
		if r.Bytes != data {
			t.Errorf("%s: %d bytes a round, want %d", measurementName(r), r.Bytes, data)
		}
	}
	if r := got[key{KindSeq, WayCold, cfg.IOSize, false, bs}]; r != nil && r.Counters.BucketRead < uint64(cfg.Repeat)*uint64(data) {
		t.Errorf("cold reads fetched %d bytes from the bucket, want at least %d", r.Counters.BucketRead, cfg.Repeat*int(data))
	}
	if r := got[key{KindWrite, WayStrata, cfg.IOSize, false, bs}]; r != nil && r.Counters.BucketWritten != uint64(cfg.Repeat)*uint64(data) {
		t.Errorf("the writes put %d bytes into the bucket, want %d", r.Counters.BucketWritten, cfg.Repeat*int(data))
	}
	for _, size := range cfg.RandomSizes {
		for _, way := range []Way{WayCold, WayWarm, WayRaw} {
			b := bs
			if way == WayRaw {
				b = 0
			}
			r := got[key{KindRandom, way, size, false, b}]
			if r == nil {
				t.Errorf("no random read result of %d bytes %s", size, way)
				continue
			}
			if r.Ops != int64(cfg.RandomReads) || r.Latency.Max <= 0 || r.Latency.P50 > r.Latency.Max {
				t.Errorf("%s: %d ops, latency %+v", measurementName(r), r.Ops, r.Latency)
			}
			if way == WayCold && r.Counters.BucketRead < uint64(cfg.Repeat*cfg.RandomReads*size) {
				t.Errorf("%s: fetched %d bytes from the bucket: not cold", measurementName(r), r.Counters.BucketRead)
			}
		}
	}
	for _, b := range cfg.BlockSizes {
		for _, k := range []key{{KindWrite, WayStrata, cfg.IOSize, true, b}, {KindSeq, WayCold, cfg.IOSize, true, b}, {KindSeq, WayWarm, cfg.IOSize, true, b}} {
			if got[k] == nil {
				t.Errorf("no sweep result %+v", k)
			}
		}
	}
	if n := len(phases); n != cfg.Repeat*(2+3+2+3*len(cfg.RandomSizes)+3*len(cfg.BlockSizes)) {
		t.Errorf("%d timed rounds: %q", n, phases)
	}
	if len(rep.Targets()) != 3 {
		t.Errorf("targets %+v, want warm/raw twice and cold/link", rep.Targets())
	}
	checkOutputs(t, rep, "Block size sweep", "of link")
	// Nothing is left behind.
	if _, err := cluster.emb.Client().Stat(context.Background(), cfg.Dir); err == nil {
		t.Errorf("%s is still there", cfg.Dir)
	}
	if left, _ := filepath.Glob(filepath.Join(cfg.RawDir, "*")); len(left) > 0 {
		t.Errorf("raw files left: %v", left)
	}
}

// checkOutputs renders the report both ways; the table must mention want.
func checkOutputs(t *testing.T, rep *Report, want ...string) {
	t.Helper()
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range append(want, "machine:", "parameters:", "Sequential", "Random reads", "Targets", "of raw") {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Results []struct {
			Kind string  `json:"kind"`
			MBps float64 `json:"mb_per_sec"`
		} `json:"results"`
		Targets []Target `json:"targets"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js.String())
	}
	if len(back.Results) != len(rep.Results) || len(back.Targets) != len(rep.Targets()) {
		t.Errorf("JSON has %d results and %d targets, want %d and %d", len(back.Results), len(back.Targets),
			len(rep.Results), len(rep.Targets()))
	}
}

func TestRunRemoteSkipsCold(t *testing.T) {
	// The embedded cluster seen as one the benchmark cannot control.
	cfg := tinyConfig(t, &Remote{C: cluster.emb.Client(), Addr: "test"})
	cfg.BlockSizes, cfg.Repeat, cfg.RandomSizes = nil, 1, []int{64 << 10}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Way == WayCold || r.Kind == KindDisk {
			t.Errorf("%s ran against a remote cluster", measurementName(r))
		}
	}
	if len(rep.Notes) != 2 {
		t.Errorf("notes %q, want the cold and disk phases' skips", rep.Notes)
	}
	if ts := rep.Targets(); len(ts) != 1 {
		t.Errorf("targets %+v, want warm/raw only", ts)
	}
	checkOutputs(t, rep)
}

func TestRunPhasesSubset(t *testing.T) {
	cfg := tinyConfig(t, cluster.emb)
	cfg.BlockSizes, cfg.Repeat, cfg.Phases = nil, 1, []Phase{PhaseRandom}
	cfg.RandomSizes = []int{4 << 10}
	cfg.Keep = true
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	for _, r := range rep.Results {
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	if !slices.Equal(kinds, []Kind{KindWrite, KindRandom}) {
		t.Errorf("kinds measured: %v", kinds)
	}
	// Keep left the files: a second run into the same directory refuses.
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a run into an existing directory: %v", err)
	}
	if _, err := cluster.emb.Client().Delete(context.Background(), cfg.Dir, true); err != nil {
		t.Fatal(err)
	}
}

func TestRunCacheMode(t *testing.T) {
	ctx := context.Background()
	// A cluster of its own: its namespace is in cache mode, 1 MiB blocks.
	emb, err := StartEmbedded(ctx, EmbeddedConfig{Dir: t.TempDir(), Mode: ModeCache, BlockSize: 1 << 20,
		Link: Link{Bandwidth: 1 << 30, Latency: 100 * time.Microsecond}, CacheBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := emb.Close(); err != nil {
			t.Error(err)
		}
	}()
	cfg := tinyConfig(t, emb)
	cfg.Mode, cfg.BlockSize, cfg.BlockSizes = ModeCache, 0, nil
	// Several GETs per object, more than in flight, the last one short.
	cfg.DirectGet, cfg.DirectAhead = 700<<10, 2
	var phases []string
	cfg.OnPhase = func(name string) func() {
		phases = append(phases, name)
		return func() {}
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	data := uint64(cfg.Files) * uint64(cfg.FileSize)
	got := map[string]*Result{}
	for _, r := range rep.Results {
		got[measurementName(r)] = r
		if r.Way == WayWarm && r.Counters.RPC != 0 {
			t.Errorf("%s: %d bytes over RPC, want short-circuit only", measurementName(r), r.Counters.RPC)
		}
	}
	rounds := uint64(cfg.Repeat)
	for name, want := range map[string]func(*Result) bool{
		// The objects went straight into the bucket: the direct puts
		// count them, and (below) the worker wrote nothing.
		"write direct": func(r *Result) bool { return r.Counters.BucketWritten == rounds*data },
		"write raw":    nil,
		// Strata's cold reads fetched every byte from the bucket.
		"read cold": func(r *Result) bool { return r.Counters.BucketRead >= rounds*data },
		// The direct reads GET every byte once, and no more.
		"read direct": func(r *Result) bool { return r.Counters.BucketRead == rounds*data },
		"read warm":   func(r *Result) bool { return r.Counters.BucketRead == 0 },
		"read raw":    nil, "read, disk warm": nil, "read, disk raw": nil,
	} {
		r := got[name]
		switch {
		case r == nil:
			t.Errorf("no result %q", name)
		case r.Bytes != int64(data) || len(r.Rounds) != cfg.Repeat:
			t.Errorf("%s: %d bytes a round, %d rounds", name, r.Bytes, len(r.Rounds))
		case want != nil && !want(r):
			t.Errorf("%s: counters %+v", name, r.Counters)
		}
	}
	for _, size := range cfg.RandomSizes {
		for _, way := range []Way{WayCold, WayDirect, WayWarm, WayRaw} {
			r := got[measurementName(&Result{Kind: KindRandom, Way: way, Size: size})]
			if r == nil {
				t.Errorf("no random read result of %d bytes %s", size, way)
				continue
			}
			if way == WayDirect && r.Counters.BucketRead != rounds*uint64(r.Ops)*uint64(size) {
				t.Errorf("%s: %d bytes from the bucket, want exactly the %d reads'", measurementName(r), r.Counters.BucketRead, r.Ops)
			}
		}
	}
	if rep.Params.BlockSize != 1<<20 {
		t.Errorf("block size %d, want the namespace's 1 MiB", rep.Params.BlockSize)
	}
	if n := len(phases); n != cfg.Repeat*(2+4+2+4*len(cfg.RandomSizes)) {
		t.Errorf("%d timed rounds: %q", n, phases)
	}
	if len(rep.Targets()) != 3 {
		t.Errorf("targets %+v, want warm/raw twice and cold/link", rep.Targets())
	}
	checkOutputs(t, rep, "mode:       cache", "direct", "of the direct reads' MB/s")
	c, err := counters(ctx, emb.Client())
	if err != nil {
		t.Fatal(err)
	}
	if c.BucketWritten != 0 {
		t.Errorf("the worker wrote %d bytes into the bucket: the files went through Strata", c.BucketWritten)
	}
	// Nothing is left behind, in Strata or in the bucket.
	if _, err := emb.Client().Stat(ctx, cfg.Dir); err == nil {
		t.Errorf("%s is still there", cfg.Dir)
	}
	if left, err := emb.Bucket().List(ctx, "", "", 0); err != nil || len(left) > 0 {
		t.Errorf("objects left in the bucket: %v (%v)", left, err)
	}
}

func TestRunModeMismatch(t *testing.T) {
	// A block-mode cluster has no bucket to put objects into.
	cfg := tinyConfig(t, cluster.emb)
	cfg.Mode, cfg.BlockSizes = ModeCache, nil
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "cache mode needs") {
		t.Errorf("cache mode against a block-mode cluster: %v", err)
	}
}
