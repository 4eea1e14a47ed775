package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/procgroup"
)

// runBenchMetaGroups runs the metadata benchmark on a fresh group of each
// size in --members and prints the throughput ratios to the first.
func runBenchMetaGroups(ctx context.Context, f *benchMetaFlags, cfg metabench.Config, stdout, stderr io.Writer) error {
	sizes, err := metabench.ParseThreads(f.members)
	if err != nil {
		return fmt.Errorf("--members: %w", err)
	}
	if f.embedded || f.meta != "" {
		return errors.New("--members starts its own groups: it excludes --embedded and --meta")
	}
	var reports []*metabench.Report
	for _, n := range sizes {
		rep, err := benchMetaGroup(ctx, f, cfg, n, stderr)
		if err != nil {
			return fmt.Errorf("%d members: %w", n, err)
		}
		fmt.Fprintf(stdout, "== %d member(s)\n", n)
		if err := rep.WriteTable(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
		reports = append(reports, rep)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "OP\tTHREADS\t")
	for _, n := range sizes {
		fmt.Fprintf(w, "%d MEMBER ops/s\t", n)
	}
	for _, n := range sizes[1:] {
		fmt.Fprintf(w, "%d/%d\t", n, sizes[0])
	}
	fmt.Fprintln(w)
	for i, base := range reports[0].Results {
		fmt.Fprintf(w, "%s\t%d\t", base.Op, base.Threads)
		for _, rep := range reports {
			fmt.Fprintf(w, "%.0f\t", rep.Results[i].OpsPerSec())
		}
		for _, rep := range reports[1:] {
			fmt.Fprintf(w, "%.2f\t", rep.Results[i].OpsPerSec()/base.OpsPerSec())
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

func benchMetaGroup(ctx context.Context, f *benchMetaFlags, cfg metabench.Config, n int, stderr io.Writer) (*metabench.Report, error) {
	dir, err := os.MkdirTemp("", "strata-bench-meta-group-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	g, err := startBenchGroup(ctx, n, dir)
	if err != nil {
		return nil, err
	}
	defer g.Stop()
	cfg.Target = fmt.Sprintf("%d member(s) at %s", n, g.Meta())
	tok, err := g.AdminToken(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Clients, err = f.clients(g.Meta(), "", tok); err != nil {
		return nil, err
	}
	defer closeClients(cfg.Clients)
	rep, err := metabench.Run(ctx, cfg)
	if err == nil && rep.Errors() > 0 {
		err = fmt.Errorf("%d operations failed", rep.Errors())
	}
	return rep, err
}

// startBenchGroup starts a group of n `strata meta` processes of this
// binary, with args, on loopback. Member i keeps its state in dir/m<i> and
// its log in dir/m<i>.log.
func startBenchGroup(ctx context.Context, n int, dir string, args ...string) (*procgroup.Group, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return procgroup.Start(ctx, procgroup.Config{Binary: self, Dir: dir, Members: n, Args: args})
}
