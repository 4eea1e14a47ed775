package databench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/cputime"
)

// runner is one run in progress.
type runner struct {
	cfg  Config
	c    *client.Client
	pat  *pattern
	rep  *Report
	link *Link
	// strata and raw are the main files' paths, file i at index i (the
	// Strata ones are the last write round's).
	strata, raw []string
	// coldOK says whether the cluster's caches can be emptied.
	coldOK bool
	// direct is cache mode's own traffic with the bucket.
	direct direct
}

// cache reports whether the run is in cache mode.
func (r *runner) cache() bool { return r.cfg.Mode == ModeCache }

// Run runs the benchmark. It returns the report of what it measured, also
// when it fails part way (with the error).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.RawDir, 0o755); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, c: cfg.Cluster.Client(), link: cfg.Cluster.Link(),
		pat: newPattern(cfg.Seed, max(cfg.IOSize, slices0(cfg.RandomSizes)))}
	r.rep = &Report{Started: time.Now(), Machine: benchkit.DescribeMachine().WithDisk(cfg.RawDir), Cluster: cfg.Cluster.Describe(),
		Link: r.link, Params: Params{Mode: cfg.Mode, Dir: cfg.Dir, RawDir: cfg.RawDir, Files: cfg.Files, FileSize: cfg.FileSize,
			BlockSize: cfg.BlockSize, IOSize: cfg.IOSize, Readers: cfg.Readers, Repeat: cfg.Repeat,
			RandomSizes: cfg.RandomSizes, RandomReads: cfg.RandomReads, BlockSizes: cfg.BlockSizes,
			Phases: cfg.Phases, Verify: cfg.Verify, Seed: cfg.Seed}}
	if r.cache() {
		r.rep.Params.DirectGet, r.rep.Params.DirectAhead = cfg.DirectGet, cfg.DirectAhead
	}
	if r.cache() {
		r.direct.bucket = cfg.Cluster.(Bucketed).Bucket()
	}
	r.coldOK = !errors.Is(cfg.Cluster.DropCache(ctx), ErrNoCacheControl)
	if !r.coldOK {
		r.note("cold phases skipped: the workers' caches cannot be emptied from here")
	}
	if err := r.check(ctx); err != nil {
		return nil, err
	}
	for i := range cfg.Files {
		r.raw = append(r.raw, filepath.Join(cfg.RawDir, fmt.Sprintf("f%d", i)))
	}
	err := r.run(ctx)
	if cerr := r.cleanup(); err == nil {
		err = cerr
	}
	return r.rep, err
}

func slices0(s []int) int {
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func (r *runner) run(ctx context.Context) error {
	if err := r.writeMain(ctx); err != nil {
		return err
	}
	steps := []struct {
		phase Phase
		fn    func(context.Context) error
	}{{PhaseSeq, r.seqPhase}, {PhaseDisk, r.diskPhase}, {PhaseRandom, r.randomPhase}}
	for _, s := range steps {
		if r.cfg.has(s.phase) {
			if err := s.fn(ctx); err != nil {
				return err
			}
		}
	}
	for _, bs := range r.cfg.BlockSizes {
		if err := r.sweep(ctx, bs); err != nil {
			return err
		}
	}
	return nil
}

// check refuses to start a run that cannot fit: the Strata files and the
// raw ones need room on the local disk (an embedded cluster's bucket and
// cache are there too), and Dir must not exist.
func (r *runner) check(ctx context.Context) error {
	if _, err := r.c.Stat(ctx, r.cfg.Dir); err == nil {
		return fmt.Errorf("databench: %s exists already; pick another directory", r.cfg.Dir)
	}
	data := int64(r.cfg.Files) * r.cfg.FileSize
	need := data // the raw files
	if r.cfg.Cluster.CacheDirs() != nil {
		// The bucket and the cache share the disk; the files of earlier
		// write rounds and of the sweep stay in the cache until evicted.
		need += (1 + int64(r.cfg.Repeat)) * data * int64(1+len(r.cfg.BlockSizes))
	}
	if free := r.rep.Machine.DiskFree; free > 0 && uint64(need) > free {
		return fmt.Errorf("databench: the run needs about %.1f GiB on %s, %.1f GiB are free",
			float64(need)/(1<<30), r.cfg.RawDir, float64(free)/(1<<30))
	}
	// Page cache warm reads need the raw files and the cache's copies in
	// memory at once (an embedded bucket's files compete for it too).
	if avail := r.rep.Machine.MemAvailable; avail > 0 && uint64(3*data) > avail {
		r.note(fmt.Sprintf("only %.1f GiB of memory is available for %.1f GiB of files (raw, cached, bucket): "+
			"'read' rows may come partly from the disk; see the in RAM column", float64(avail)/(1<<30), float64(3*data)/(1<<30)))
	}
	return nil
}

func (r *runner) note(s string) { r.rep.Notes = append(r.rep.Notes, s) }

func (r *runner) progressf(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, format+"\n", args...)
	}
}

// trial is one way of one measurement: prep runs before each round,
// untimed; run is the timed round. A run records the latencies of its
// calls in recs (one recorder per reader) if the trial has them.
type trial struct {
	res  *Result
	prep func(context.Context) error
	run  func(ctx context.Context, recs []*benchkit.Recorder) error
	recs []*benchkit.Recorder
	// files, if set, lists the local files the round reads, whose share
	// in the OS page cache is sampled before each round.
	files func() ([]string, error)
}

// alternate runs rounds of the trials in turn, rounds times: round 1 of
// each, then round 2 of each, ... so that a change in the machine's load
// hits every way alike. Each result gets its rounds' times, CPU and
// counters, and is added to the report.
func (r *runner) alternate(ctx context.Context, rounds int, trials ...*trial) error {
	for round := range rounds {
		for _, t := range trials {
			if err := r.round(ctx, t, round, rounds); err != nil {
				return err
			}
		}
	}
	for _, t := range trials {
		t.res.Elapsed = benchkit.Median(t.res.Rounds)
		if t.recs != nil {
			t.res.Latency = benchkit.Summarize(t.recs)
		}
		r.rep.Results = append(r.rep.Results, t.res)
	}
	return nil
}

func (r *runner) round(ctx context.Context, t *trial, round, rounds int) error {
	res := t.res
	name := measurementName(res)
	if t.prep != nil {
		if err := t.prep(ctx); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if t.files != nil && canDropPageCache {
		if err := r.sampleResidency(t); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	before, err := r.wayCounters(ctx, res.Way)
	if err != nil {
		return err
	}
	var end func()
	if r.cfg.OnPhase != nil {
		end = r.cfg.OnPhase(name)
	}
	cpu, start := cputime.Process(), time.Now()
	err = t.run(ctx, t.recs)
	elapsed, used := time.Since(start), cputime.Process()-cpu
	if end != nil {
		end()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	after, err := r.wayCounters(ctx, res.Way)
	if err != nil {
		return err
	}
	res.Counters = res.Counters.plus(after.minus(before))
	res.Rounds = append(res.Rounds, elapsed)
	res.CPU += used
	r.progressf("%s: round %d/%d: %.1f MB in %.3fs, %.0f MB/s, %.0f ops/s, cpu %.0f%%", name, round+1, rounds,
		float64(res.Bytes)/1e6, elapsed.Seconds(), perSec(res.Bytes, elapsed)/1e6, perSec(res.Ops, elapsed),
		100*used.Seconds()/max(elapsed.Seconds(), 1e-9))
	return nil
}

// wayCounters reads the counters of the traffic a round of way makes: the
// workers' for Strata's ways, the benchmark's own for the direct way, none
// for raw files.
func (r *runner) wayCounters(ctx context.Context, way Way) (Counters, error) {
	switch way {
	case WayRaw:
		return Counters{}, nil
	case WayDirect:
		return r.direct.counters(), nil
	}
	return counters(ctx, r.c)
}

// sampleResidency adds the share of t's files in the page cache to its
// result.
func (r *runner) sampleResidency(t *trial) error {
	files, err := t.files()
	if err != nil {
		return err
	}
	var resident, size int64
	for _, f := range files {
		n, s, err := residentBytes(f)
		if err != nil {
			return err
		}
		resident, size = resident+n, size+s
	}
	if size > 0 {
		t.res.residency = append(t.res.residency, float64(resident)/float64(size))
	}
	return nil
}

// measurementName names a measurement in progress lines and profiles.
func measurementName(res *Result) string {
	s := string(res.Kind) + " " + string(res.Way)
	if res.Kind == KindRandom {
		s += " " + formatSize(int64(res.Size))
	}
	if res.Sweep {
		s = "sweep " + formatSize(res.BlockSize) + " " + s
	}
	return s
}

// newRecorders returns one recorder per reader.
func newRecorders(n int) []*benchkit.Recorder {
	out := make([]*benchkit.Recorder, n)
	for i := range out {
		out[i] = benchkit.NewRecorder()
	}
	return out
}

// cleanup removes the run's files unless Keep.
func (r *runner) cleanup() error {
	if r.cfg.Keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if _, err := r.c.Delete(ctx, r.cfg.Dir, true); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", r.cfg.Dir, err))
	}
	for _, p := range r.raw {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// formatSize writes n in the largest binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
