package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/procgroup"
)

const benchFailoverLong = `Measure how long the namespace service is unavailable to writers when its
leader dies. The benchmark starts its own group of --members "strata meta"
processes of this binary on loopback (state in a temporary directory), keeps
--writers clients creating directories back to back, and then, --trials
times: finds the leader, kills it with SIGKILL, and times from the kill to
the first acknowledgement of a write sent after the leader was dead
(through the surviving members: the clients follow the new leader on their
own). The killed member is restarted
and caught up before the next trial.

Output: one row per trial (old leader, new leader, milliseconds), then the
median and the maximum. The members use the default Raft tick unless
--raft-tick is given: elections start after 10 to 20 ticks without a leader.

With --steady DURATION, the writers first run that long with no fault, and
the benchmark reports the writes acknowledged per second and the leader
changes meanwhile (the Raft term before and after, on every member): short
election timeouts must not cost elections under load (--writers 64 keeps
the leader busy; --trials 0 measures only that).`

func benchFailoverCmd() *cobra.Command {
	var trials, members, writers int
	var tick, steady time.Duration
	cmd := &cobra.Command{
		Use:   "failover",
		Short: "Time leader failover of a namespace service group under writes",
		Long:  benchFailoverLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trials < 0 || (trials == 0 && steady <= 0) || members < 3 || writers < 1 {
				return errors.New("--writers must be at least 1, --members at least 3, --trials at least 1 (or 0 with --steady)")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBenchFailover(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(),
				failoverRun{trials: trials, members: members, writers: writers, tick: tick, steady: steady})
		},
	}
	cmd.Flags().IntVar(&trials, "trials", 10, "leader kills to time")
	cmd.Flags().IntVar(&members, "members", 3, "members of the group")
	cmd.Flags().IntVar(&writers, "writers", 4, "concurrent writers")
	cmd.Flags().DurationVar(&tick, "raft-tick", 0, "Raft tick of the members (default: strata meta's)")
	cmd.Flags().DurationVar(&steady, "steady", 0, "run the writers this long with no fault first, counting leader changes")
	return cmd
}

// failoverRun is what a run of the benchmark does.
type failoverRun struct {
	trials, members, writers int
	tick, steady             time.Duration
}

func runBenchFailover(ctx context.Context, stdout, stderr io.Writer, run failoverRun) error {
	trials, members, writers, tick := run.trials, run.members, run.writers, run.tick
	dir, err := os.MkdirTemp("", "strata-bench-failover-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var args []string
	if tick > 0 {
		args = append(args, "--raft-tick", tick.String())
	}
	g, err := startBenchGroup(ctx, members, dir, args...)
	if err != nil {
		return err
	}
	defer g.Stop()
	tok, err := g.AdminToken(ctx)
	if err != nil {
		return err
	}
	c, err := client.New(client.Config{Meta: g.Meta(), Token: tok, RetryTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Mkdirs(ctx, "/failover", 0o755); err != nil {
		return err
	}

	// Writers note when each acknowledged write started and ended.
	acks := make(chan ack, 1024)
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; load.Err() == nil; i++ {
				start := time.Now()
				if _, err := c.Mkdirs(load, fmt.Sprintf("/failover/w%d-%d", w, i), 0o755); err == nil {
					select {
					case acks <- ack{start, time.Now()}:
					default:
					}
				}
			}
		}()
	}
	defer func() { stopLoad(); wg.Wait() }()

	start := time.Now()
	fmt.Fprintf(stderr, "%d members on %s; %d writers\n", members, g.Meta(), writers)
	var calm *steadyResult
	if run.steady > 0 {
		if calm, err = runSteady(ctx, g, c, acks, run.steady); err != nil {
			return err
		}
	}
	type trial struct {
		old, next int
		took      time.Duration
	}
	var results []trial
	for n := range trials {
		if err := g.CaughtUp(ctx, c); err != nil {
			return err
		}
		old, err := g.Leader(ctx, c)
		if err != nil {
			return err
		}
		drain(acks)
		killed := time.Now()
		g.Kill(old)
		// A dying leader may still answer writes sent before it died: count
		// only writes sent once it is gone.
		dead := time.Now()
		var first time.Time
		for first.IsZero() {
			select {
			case a := <-acks:
				if a.start.After(dead) {
					first = a.end
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		next, err := g.Leader(ctx, c)
		if err != nil {
			return err
		}
		results = append(results, trial{old, next, first.Sub(killed)})
		fmt.Fprintf(stderr, "trial %d: member %d killed, member %d leads, first write after %v\n", n+1, old, next, first.Sub(killed).Round(time.Millisecond))
		if _, err := g.Start(old); err != nil {
			return err
		}
	}

	var took []time.Duration
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "strata bench failover, %s\n%s\n", start.Format(time.RFC3339), benchkit.DescribeMachine())
	fmt.Fprintf(stdout, "%d members (separate processes on loopback), %d writers creating directories, SIGKILL of the leader\n\n", members, writers)
	fmt.Fprintln(w, "TRIAL\tKILLED\tNEW LEADER\tFAILOVER ms\t")
	for i, r := range results {
		fmt.Fprintf(w, "%d\t%d\t%d\t%.0f\t\n", i+1, r.old, r.next, ms(r.took))
		took = append(took, r.took)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if calm != nil {
		fmt.Fprintf(stdout, "\nno fault for %v: %d writes acknowledged (%.0f/s), Raft term %d -> %d, %d leader changes\n",
			run.steady, calm.acked, float64(calm.acked)/run.steady.Seconds(), calm.termBefore, calm.termAfter, calm.changes)
	}
	if len(took) == 0 {
		return nil
	}
	slices.Sort(took)
	fmt.Fprintf(stdout, "\nmedian %.0f ms, max %.0f ms over %d trials\n", ms(benchkit.Median(took)), ms(took[len(took)-1]), len(took))
	return nil
}

// steadyResult is what the writers did with no fault, and the leader
// changes meanwhile.
type steadyResult struct {
	acked                 int
	termBefore, termAfter uint64
	changes               int // terms begun, on the member that saw the most
}

// runSteady counts the writes acknowledged for d, and the Raft terms the
// members went through meanwhile: every election, won or not, begins one
// (pre-vote keeps a member that cannot win from starting one).
func runSteady(ctx context.Context, g *procgroup.Group, c *client.Client, acks chan ack, d time.Duration) (*steadyResult, error) {
	if err := g.CaughtUp(ctx, c); err != nil {
		return nil, err
	}
	before := terms(ctx, c)
	r := &steadyResult{termBefore: slices.Max(before)}
	drain(acks)
	end := time.After(d)
	for done := false; !done; {
		select {
		case <-acks:
			r.acked++
		case <-end:
			done = true
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	after := terms(ctx, c)
	r.termAfter = slices.Max(after)
	for i := range min(len(before), len(after)) {
		r.changes = max(r.changes, int(after[i]-before[i]))
	}
	return r, nil
}

// terms returns each member's Raft term, in address order.
func terms(ctx context.Context, c *client.Client) []uint64 {
	var out []uint64
	for _, st := range c.MemberStatuses(ctx) {
		if st.Err == nil {
			out = append(out, st.Status.Term)
		}
	}
	return out
}

// ack is an acknowledged write's start and end.
type ack struct{ start, end time.Time }

func drain(ch chan ack) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
