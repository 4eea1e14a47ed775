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
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/stratafs/strata/bench/benchkit"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/procgroup"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

const benchRejoinLong = `Measure how long a member of the namespace service takes to catch up after
an outage. The benchmark starts its own group of --members "strata meta"
processes of this binary on loopback (state in a temporary directory), keeps
--writers clients creating directories back to back, and then, --trials
times: kills a follower with SIGKILL, leaves it down for --down while the
writes go on, starts it again, and times from the start to the moment the
member has applied what the leader had committed when it was started (as
"strata admin status" shows it: LAG 0 for that index). That covers the
member's start, the leader reaching it again, and the entries (or the
snapshot, after an outage longer than the log's retention) it is sent.

Output: one row per trial (member, entries it missed, milliseconds), then
the median and the maximum.`

func benchRejoinCmd() *cobra.Command {
	var trials, members, writers int
	var down time.Duration
	cmd := &cobra.Command{
		Use:   "rejoin",
		Short: "Time a namespace service member's catch-up after an outage, under writes",
		Long:  benchRejoinLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trials < 1 || members < 3 || writers < 1 || down <= 0 {
				return errors.New("--trials and --writers must be at least 1, --members at least 3, --down above 0")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runBenchRejoin(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), trials, members, writers, down)
		},
	}
	cmd.Flags().IntVar(&trials, "trials", 3, "outages to time")
	cmd.Flags().IntVar(&members, "members", 3, "members of the group")
	cmd.Flags().IntVar(&writers, "writers", 2, "concurrent writers")
	cmd.Flags().DurationVar(&down, "down", 90*time.Second, "how long the member stays down")
	return cmd
}

// rejoinTrial is one outage: the member, the entries committed while it
// was down, and the time from its start to its catch-up.
type rejoinTrial struct {
	member int
	missed uint64
	took   time.Duration
}

func runBenchRejoin(ctx context.Context, stdout, stderr io.Writer, trials, members, writers int, down time.Duration) error {
	dir, err := os.MkdirTemp("", "strata-bench-rejoin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	g, err := startBenchGroup(ctx, members, dir)
	if err != nil {
		return err
	}
	defer g.Stop()
	c, err := client.New(client.Config{Meta: g.Meta(), RetryTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Mkdirs(ctx, "/rejoin", 0o755); err != nil {
		return err
	}
	load, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 0; load.Err() == nil; i++ {
				_, _ = c.Mkdirs(load, fmt.Sprintf("/rejoin/w%d-%d", w, i), 0o755)
			}
		})
	}
	defer func() { stopLoad(); wg.Wait() }()

	start := time.Now()
	fmt.Fprintf(stderr, "%d members on %s; %d writers; each outage %v\n", members, g.Meta(), writers, down)
	var results []rejoinTrial
	for n := range trials {
		r, err := rejoinOnce(ctx, g, c, down)
		if err != nil {
			return err
		}
		results = append(results, r)
		fmt.Fprintf(stderr, "trial %d: member %d, down %v, missed %d entries, caught up %v after its start\n",
			n+1, r.member, down, r.missed, r.took.Round(time.Millisecond))
	}

	var took []time.Duration
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "strata bench rejoin, %s\n%s\n", start.Format(time.RFC3339), benchkit.DescribeMachine())
	fmt.Fprintf(stdout, "%d members (separate processes on loopback), %d writers creating directories, a follower killed (SIGKILL) for %v\n\n", members, writers, down)
	fmt.Fprintln(w, "TRIAL\tMEMBER\tENTRIES MISSED\tCATCH-UP ms\t")
	for i, r := range results {
		fmt.Fprintf(w, "%d\t%d\t%d\t%.0f\t\n", i+1, r.member, r.missed, ms(r.took))
		took = append(took, r.took)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	slices.Sort(took)
	fmt.Fprintf(stdout, "\nmedian %.0f ms, max %.0f ms over %d trials\n", ms(benchkit.Median(took)), ms(took[len(took)-1]), len(took))
	return nil
}

// rejoinOnce kills a follower, waits out down, starts it again and times
// its catch-up.
func rejoinOnce(ctx context.Context, g *procgroup.Group, c *client.Client, down time.Duration) (rejoinTrial, error) {
	if err := g.CaughtUp(ctx, c); err != nil {
		return rejoinTrial{}, err
	}
	leader, err := g.Leader(ctx, c)
	if err != nil {
		return rejoinTrial{}, err
	}
	member := leader%len(g.Addrs()) + 1
	before := memberApplied(ctx, c, g.Addrs()[member-1])
	g.Kill(member)
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return rejoinTrial{}, ctx.Err()
	}
	// The member is asked on a connection of its own that retries every
	// 10 ms: the client's, refused while the member was down, would wait
	// out gRPC's backoff (a second or more) and time that instead.
	conn, err := grpc.NewClient(g.Addrs()[member-1], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 10 * time.Millisecond,
			Multiplier: 1, MaxDelay: 10 * time.Millisecond}, MinConnectTimeout: time.Second}))
	if err != nil {
		return rejoinTrial{}, err
	}
	defer conn.Close()
	probe := pb.NewMetaServiceClient(conn)
	target := leaderCommit(ctx, c)
	started := time.Now()
	if _, err := g.Start(member); err != nil {
		return rejoinTrial{}, err
	}
	for {
		st, err := probe.Status(ctx, &pb.StatusRequest{}, grpc.WaitForReady(true))
		if err == nil && st.AppliedIndex >= target {
			break
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return rejoinTrial{}, ctx.Err()
		}
	}
	return rejoinTrial{member: member, missed: target - min(target, before), took: time.Since(started)}, nil
}

// memberApplied returns the applied index of the member at addr (0 if it
// does not answer).
func memberApplied(ctx context.Context, c *client.Client, addr string) uint64 {
	for _, st := range c.MemberStatuses(ctx) {
		if st.Err == nil && st.Address == addr {
			return st.Status.AppliedIndex
		}
	}
	return 0
}

// leaderCommit returns the leader's commit index (0 if no leader answers).
func leaderCommit(ctx context.Context, c *client.Client) uint64 {
	for _, st := range c.MemberStatuses(ctx) {
		if st.Err == nil && st.Status.Role == "StateLeader" {
			return st.Status.CommittedIndex
		}
	}
	return 0
}
