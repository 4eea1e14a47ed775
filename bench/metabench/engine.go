package metabench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/cputime"
	"github.com/stratafs/strata/internal/fserr"
)

// Result is the measurement of one phase at one thread count.
type Result struct {
	Op      Op
	Threads int
	Ops     int64 // operations done, failed ones included
	Errors  int64
	Entries int64 // list: directory entries returned
	Elapsed time.Duration
	// CPU is the CPU time this process used during the phase: the
	// client's, and with an embedded service the service's too.
	CPU time.Duration
	// HostCPU is the whole machine's CPU use during the phase, as
	// CPUPercent counts it; -1 when unknown. Besides this process it holds
	// the service (when it runs here) and whatever else was running.
	HostCPU float64
	Latency benchkit.Latency
	// FirstError is the first failure's message, if any failed.
	FirstError string
}

// OpsPerSec is the phase's throughput.
func (r Result) OpsPerSec() float64 { return perSec(r.Ops, r.Elapsed) }

// CPUPercent is this process's CPU use during the phase, as top shows it
// (100 is one core busy).
func (r Result) CPUPercent() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return 100 * r.CPU.Seconds() / r.Elapsed.Seconds()
}

// EntriesPerSec is a list phase's rate of entries returned.
func (r Result) EntriesPerSec() float64 { return perSec(r.Entries, r.Elapsed) }

func perSec(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Run runs the benchmark cfg describes and returns its report. Failed
// operations are counted in the results, not returned; Run fails when the
// service cannot be reached, when Dir exists, when every operation of a
// phase failed, or when ctx ends.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	rep := &Report{Started: time.Now(), Machine: benchkit.DescribeMachine(), Params: paramsOf(&cfg)}
	svc, err := warmUp(ctx, &cfg)
	if err != nil {
		return rep, err
	}
	rep.Service = svc
	if cfg.Prepare != nil {
		if err := cfg.Prepare(ctx, cfg.Dir); err != nil {
			return rep, fmt.Errorf("metabench: preparing %s: %w", cfg.Dir, err)
		}
	}
	r := &runner{cfg: &cfg, steps: plan(cfg.Ops)}
	for range slices.Max(cfg.Threads) {
		r.recs = append(r.recs, benchkit.NewRecorder())
	}
	for _, n := range cfg.Threads {
		res, err := r.runThreads(ctx, n)
		rep.Results = append(rep.Results, res...)
		if err != nil {
			r.cleanup()
			return rep, err
		}
	}
	return rep, r.cleanup()
}

// warmUp connects every client (so that no phase pays for a connection
// setup), checks the base directory is new and describes the service by
// its leader (any member that answers, if none leads).
func warmUp(ctx context.Context, cfg *Config) (Service, error) {
	st, err := cfg.Clients[0].Status(ctx)
	if err != nil {
		return Service{}, fmt.Errorf("metabench: namespace service: %w", err)
	}
	for _, m := range cfg.Clients[0].MemberStatuses(ctx) {
		if m.Err == nil && m.Status.GetMemberId() == st.GetLeaderId() {
			st = m.Status
		}
	}
	for _, c := range cfg.Clients {
		if _, err := c.Stat(ctx, "/"); err != nil {
			return Service{}, fmt.Errorf("metabench: %w", err)
		}
	}
	if _, err := cfg.Clients[0].Stat(ctx, cfg.Dir); err == nil {
		return Service{}, fmt.Errorf("metabench: %s exists; pick a new --dir", cfg.Dir)
	} else if !errors.Is(err, fserr.ErrNotFound) {
		return Service{}, fmt.Errorf("metabench: %w", err)
	}
	return Service{Target: cfg.Target, Member: st.MemberId, Role: st.Role, Version: st.Version, Applied: st.AppliedIndex}, nil
}

// runner runs the steps of the plan at each thread count.
type runner struct {
	cfg   *Config
	steps []step
	recs  []*benchkit.Recorder // one per thread, reused from phase to phase
	done  atomic.Int64
}

// runThreads runs every step with n threads, each in its own directory.
func (r *runner) runThreads(ctx context.Context, n int) ([]Result, error) {
	base := r.cfg.Dir + "/t" + strconv.Itoa(n)
	threads := make([]*thread, n)
	for i := range threads {
		threads[i] = &thread{c: r.cfg.Clients[i%len(r.cfg.Clients)], dir: base + "/" + strconv.Itoa(i), rec: r.recs[i]}
	}
	fmt.Fprintf(r.cfg.Progress, "threads %d: making %d directories under %s\n", n, n, base)
	if err := r.parallel(ctx, threads, func(th *thread) error {
		_, err := th.c.Mkdirs(ctx, th.dir, 0o755)
		return err
	}); err != nil {
		return nil, fmt.Errorf("metabench: set up %s: %w", base, err)
	}
	var out []Result
	for _, st := range r.steps {
		res := r.phase(ctx, st, threads)
		if st.timed {
			out = append(out, res)
		}
		r.report(st, res)
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if res.Ops > 0 && res.Errors == res.Ops {
			return out, fmt.Errorf("metabench: every %s failed with %d threads, the first with: %s", st.op, n, res.FirstError)
		}
	}
	return out, nil
}

// parallel runs fn once per thread, concurrently, and returns the first error.
func (r *runner) parallel(ctx context.Context, threads []*thread, fn func(*thread) error) error {
	errs := make([]error, len(threads))
	var wg sync.WaitGroup
	for i, th := range threads {
		wg.Go(func() { errs[i] = fn(th) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// phase runs one step: every thread does its share of the operations, all
// released at once, and the wall time runs until the last one is done.
func (r *runner) phase(ctx context.Context, st step, threads []*thread) Result {
	act, paths := actionOf(st)
	total := r.cfg.Files
	for i, th := range threads {
		th.n = share(total, len(threads), i)
		if st.op == OpList {
			th.n = r.cfg.ListPasses
		}
		th.errs, th.firstErr, th.entries = 0, nil, 0
		th.rec.Reset()
	}
	r.done.Store(0)
	stopProgress := r.progress(st, threads)
	var end func()
	if st.timed && r.cfg.OnPhase != nil {
		end = r.cfg.OnPhase(st.op, len(threads))
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	for _, th := range threads {
		wg.Go(func() {
			<-release
			r.work(ctx, th, act, paths)
		})
	}
	host, cpu0, start := startHostMeter(), cputime.Process(), time.Now()
	close(release)
	wg.Wait()
	elapsed, cpu, hostCPU := time.Since(start), cputime.Process()-cpu0, host.percent()
	if end != nil {
		end()
	}
	stopProgress()
	res := collect(st.op, threads, elapsed)
	res.CPU, res.HostCPU = cpu, hostCPU
	return res
}

// work is one thread's loop: it stops early only when ctx ends.
func (r *runner) work(ctx context.Context, th *thread, act action, paths func(*thread, int) (string, string)) {
	for j := range th.n {
		if ctx.Err() != nil {
			return
		}
		src, dst := paths(th, j)
		t0 := time.Now()
		n, err := act(ctx, th, src, dst)
		th.rec.Record(time.Since(t0))
		th.entries += int64(n)
		if err != nil {
			th.errs++
			if th.firstErr == nil {
				th.firstErr = err
			}
		}
		r.done.Add(1)
	}
}

// share is thread i's part of total operations split between n threads.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// collect adds up the threads' counts and histograms.
func collect(op Op, threads []*thread, elapsed time.Duration) Result {
	res := Result{Op: op, Threads: len(threads), Elapsed: elapsed}
	recs := make([]*benchkit.Recorder, len(threads))
	for i, th := range threads {
		recs[i] = th.rec
		res.Ops += th.rec.Count()
		res.Errors += th.errs
		res.Entries += th.entries
		if th.firstErr != nil && res.FirstError == "" {
			res.FirstError = th.firstErr.Error()
		}
	}
	res.Latency = benchkit.Summarize(recs)
	return res
}

// cleanup removes the base directory unless the run keeps it.
func (r *runner) cleanup() error {
	if r.cfg.Keep {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	fmt.Fprintf(r.cfg.Progress, "removing %s\n", r.cfg.Dir)
	_, err := r.cfg.Clients[0].Delete(ctx, r.cfg.Dir, true)
	if err != nil && !errors.Is(err, fserr.ErrNotFound) {
		return fmt.Errorf("metabench: clean up: %w", err)
	}
	return nil
}

// Params are a run's parameters, as reported.
type Params struct {
	Dir        string `json:"dir"`
	Threads    []int  `json:"threads"`
	Files      int    `json:"files"`
	Ops        []Op   `json:"ops"`
	ListPasses int    `json:"list_passes"`
	Conns      int    `json:"conns"`
	// Batches is the reads (or batches of reads) each client has in
	// flight before it coalesces reads; mutations likewise (negative:
	// every call alone).
	Batches int `json:"batches"`
}

func paramsOf(c *Config) Params {
	return Params{Dir: c.Dir, Threads: c.Threads, Files: c.Files, Ops: c.Ops, ListPasses: c.ListPasses, Conns: len(c.Clients),
		Batches: c.Clients[0].BatchesInFlight()}
}

// Service describes the member the benchmark talked to.
type Service struct {
	Target  string `json:"target"` // Config.Target
	Member  uint64 `json:"member"`
	Role    string `json:"role"`
	Version string `json:"version"`
	Applied uint64 `json:"applied_index"` // before the run
}
