package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/metabench"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/tlsconf"
)

func benchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmarks",
		Long: `Benchmarks of a running cluster (or of an embedded one), printed as tables.
They are measurements, not tests: nothing here passes or fails on a number.`,
	}
	cmd.AddCommand(benchMetaCmd())
	cmd.AddCommand(benchDataCmd())
	cmd.AddCommand(benchFailoverCmd())
	cmd.AddCommand(benchRejoinCmd())
	cmd.AddCommand(benchProxyCmd())
	cmd.AddCommand(benchScaleCmd())
	cmd.AddCommand(benchFuseCmd())
	return cmd
}

// benchMetaFlags are the settings of "strata bench meta".
type benchMetaFlags struct {
	clientFlags
	embeddedTLS bool
	// tlsClient is the TLS of a service the run starts (embedded or
	// --members), for the clients: nil, plaintext, unless --embedded-tls.
	tlsClient  *tls.Config
	threads    string
	files      int
	ops        string
	dir        string
	conns      int
	batches    int
	listPasses int
	embedded   bool
	noAuth     bool
	// embeddedMetrics gives the embedded member the metrics a strata meta
	// collects (its calls, operations, Raft, scraped every 5 s).
	embeddedMetrics bool
	// embeddedUser and governed: the clients act as a user who is not the
	// superuser, in a base directory under quotas and an ACL (benchgov.go).
	embeddedUser string
	governed     bool
	inheritACL   bool
	dataDir      string
	jsonOut      string
	cpuProfile   string
	traceDir     string
	keep         bool
	quiet        bool
	members      string
}

const benchMetaLong = `Measure the namespace service's metadata operations the way HDFS's NNBench
does, through the Go client library, and print throughput and latency
percentiles per operation and thread count.

For each thread count in --threads, the benchmark makes one directory per
thread under --dir (DIR/tT/0, DIR/tT/1, ...) and runs the phases of --ops
one after another. A phase does --files operations in total, split evenly
between the threads, every thread in its own directory; all threads start
together and the phase's wall time runs until the last one finishes.

Operations (--ops, comma-separated, run in the order given):
  mkdir         mkdirs of a new directory
  create        an empty file created closed, in one call (WriteFile; what
                -touchz does; NNBench create_write, 0 bytes)
  createstream  create of a file open for writing, then close: two calls,
                as a writer that streams (and Hadoop's create) makes it
  create512     a 512-byte file in one call; the content is stored inline
                in the inode (create_write of a small file)
  stat          getFileStatus of each file of the current set
  open          open + read of each file of the current set (NNBench
                open_read); put create512 before it to read inline content
  list          listStatus of each thread's whole directory (every page),
                --list-passes times per thread; reported as calls/s and
                entries/s
  rename        rename of each file of the current set to a new name in
                the same directory
  delete        delete of each file of the current set

The current set is what the last create of any kind made (renamed by
rename, gone after delete). A phase that needs files when there are none
gets an untimed create first, so "--ops stat" alone works. Everything under
--dir is removed at the end unless --keep is given.

Output: a header (machine, load average, service, durability, parameters)
and one table row per (operation, threads): operations, errors, seconds,
ops/s, entries/s (list), cpu% (this process: the client, plus the service
with --embedded; 100 = one core), host% (the whole machine, so that other
work running meanwhile shows), and latency p50, p95, p99, p99.9 and max in
milliseconds, from HdrHistogram (3 significant digits; max is exact).
Progress goes to stderr. --json FILE also writes the report as JSON ("-":
to stdout, instead of the table).

Durability: "strata meta" acknowledges a mutation once its Raft log entry
is fsynced and applied; concurrent proposals share one fsync, so mutation
throughput grows with the thread count. Reads are served from the member's
applied state.

Service: by default the benchmark connects to --meta (or $STRATA_META, or
127.0.0.1:7700). --embedded instead starts a namespace service member in
this process, on --data-dir (default: a new temporary directory, removed
afterwards), with the same durability and the same settings as "strata
meta" (gRPC stream workers, the collector's GOGC 400 unless $GOGC is set),
served over loopback gRPC; client and service then share the CPUs and
those settings, and --cpuprofile sees both.

Users: the embedded member's clients are its superuser, whom the
permission checker lets by. --embedded-user NAME makes the threads act as
NAME in a base directory the superuser makes and gives them; --governed
also keeps the base directory the superuser's (mode 0700) under a name and
a space quota and lets NAME in by a named-user entry of its ACL: every
create and rename then passes the quota checks and the ACL checker.
--inherit-acl adds a default ACL that every file and directory of the run
inherits (scripts/bench-governance compares the runs).

Profiling: --cpuprofile DIR writes one CPU profile per timed phase,
DIR/<op>-<threads>t.pprof, covering exactly that phase (read them with
"go tool pprof"). With --embedded the profile includes the service.
--trace DIR likewise writes an execution trace per phase ("go tool trace";
its -pprof=syscall and -pprof=sync views show where threads wait).

Groups: --members 1,3 starts, one after the other, a group of each size of
"strata meta" processes of this binary on loopback (temporary state), runs
the same phases on each, and prints each report and then the throughput of
every row as a ratio to the first size: what replication costs.

Connections: each client has one gRPC connection (one HTTP/2 stream
multiplexer); --conns N makes N clients and spreads the threads over them.
A client coalesces: while --batches of its reads (or batches of reads) are
in flight, the reads its threads make wait and leave together as one Batch
RPC when one returns (the default of every Go client, 4); mutations
likewise, in batches of their own. --batches -1 sends every call as its own
RPC.

Examples:
  strata bench meta --meta 127.0.0.1:7712
  strata bench meta --embedded --threads 64 --ops create,stat --cpuprofile /tmp/prof
  strata bench meta --ops create512,open,stat,list,rename,delete --files 50000 --json out.json
  strata bench meta --members 1,3 --threads 64 --ops create,stat`

func benchMetaCmd() *cobra.Command {
	var f benchMetaFlags
	cmd := &cobra.Command{
		Use:   "meta",
		Short: "NNBench-style metadata benchmark: create, stat, list, rename, delete",
		Long:  benchMetaLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchMeta(cmd.Context(), &f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.threads, "threads", "1,4,16,64", "thread counts to run, comma-separated")
	fl.IntVar(&f.files, "files", 20000, "operations per phase and thread count, split between the threads")
	fl.StringVar(&f.ops, "ops", "create,stat,list,rename,delete", "phases to run, in order: mkdir, create, createstream, create512, stat, open, list, rename, delete")
	fl.StringVar(&f.dir, "dir", "", "base directory of the run; must not exist (default /bench-<timestamp>)")
	fl.IntVar(&f.conns, "conns", 1, "clients (each with its own connections) to spread the threads over")
	fl.IntVar(&f.batches, "batches", client.DefaultBatchesInFlight, "reads (or batches of reads) in flight per client before reads are coalesced; mutations likewise (-1: every call alone)")
	fl.IntVar(&f.listPasses, "list-passes", 10, "listings of its directory per thread in the list phase")
	fl.BoolVar(&f.noAuth, "insecure-no-auth", false, "with --embedded: turn the member's authentication off (to measure what it costs)")
	fl.BoolVar(&f.embeddedMetrics, "embedded-metrics", false, "with --embedded: collect the member's metrics, as strata meta does, and gather them every 5 s (to measure what they cost; docs/operations.md)")
	fl.StringVar(&f.embeddedUser, "embedded-user", "", "with --embedded: the threads act as this user, not the superuser, in a base directory the superuser makes and gives them")
	fl.BoolVar(&f.governed, "governed", false, "with --embedded-user: the superuser keeps the base directory (mode 0700), puts a name and a space quota on it and lets the user in by an ACL and a default ACL (to measure what quota and ACL checks cost)")
	fl.BoolVar(&f.inheritACL, "inherit-acl", false, "with --governed: the base directory has a default ACL too, which every file and directory of the run inherits")
	fl.BoolVar(&f.embedded, "embedded", false, "run a namespace service member in this process instead of connecting to --meta")
	fl.BoolVar(&f.embeddedTLS, "embedded-tls", false, "with --embedded: serve and connect with TLS, on a CA and certificate of the run's own (default: plaintext)")
	fl.StringVar(&f.dataDir, "data-dir", "", "with --embedded: the member's data directory (default: a temporary one, removed afterwards)")
	fl.StringVar(&f.jsonOut, "json", "", `also write the report as JSON to this file ("-": stdout, instead of the table)`)
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of each timed phase into this directory")
	fl.StringVar(&f.traceDir, "trace", "", "write an execution trace of each timed phase into this directory")
	fl.BoolVar(&f.keep, "keep", false, "leave the benchmark's files in place")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fl.StringVar(&f.members, "members", "", "start a group of each size given (e.g. 1,3: separate strata meta processes), run on each, and print their ratios")
	return cmd
}

func runBenchMeta(ctx context.Context, f *benchMetaFlags, stdout, stderr io.Writer) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if !f.quiet {
		cfg.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.members != "" {
		return runBenchMetaGroups(ctx, f, cfg, stdout, stderr)
	}
	addr, target := metaAddr(f.meta), metaAddr(f.meta)
	embeddedToken := ""
	var emb *metabench.Embedded
	if f.embedded {
		var closeEmb func()
		emb, closeEmb, err = f.startEmbedded(ctx, stderr)
		if err != nil {
			return err
		}
		defer closeEmb()
		addr, target = emb.Addr(), "embedded in this process at "+emb.Addr()
		embeddedToken = emb.Token()
	}
	cfg.Target = target
	if f.embeddedUser != "" {
		closeAdmin, err := f.asEmbeddedUser(ctx, emb, &cfg)
		if err != nil {
			return err
		}
		defer closeAdmin()
	} else if cfg.Clients, err = f.clients(addr, f.ns, embeddedToken); err != nil {
		return err
	}
	defer closeClients(cfg.Clients)
	if cfg.OnPhase, err = phaseRecorders(f.cpuProfile, f.traceDir, stderr); err != nil {
		return err
	}
	rep, err := metabench.Run(ctx, cfg)
	if rep != nil && len(rep.Results) > 0 {
		if werr := writeReport(rep, f.jsonOut, stdout); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	if n := rep.Errors(); n > 0 {
		return fmt.Errorf("%d operations failed", n)
	}
	return nil
}

// clients makes the --conns clients of the service at addr, with token tok
// (empty: the one the client finds).
func (f *benchMetaFlags) clients(addr, ns, tok string) ([]*client.Client, error) {
	return f.clientsN(addr, ns, tok, f.conns)
}

// clientsN makes n clients of the service at addr, with token tok (empty:
// the one the client finds).
func (f *benchMetaFlags) clientsN(addr, ns, tok string, n int) ([]*client.Client, error) {
	cfg, err := clientConfig(addr, ns, f.timeout, f.tokenFile)
	if err != nil {
		return nil, err
	}
	if tok != "" {
		cfg.Token = tok
	}
	cfg.BatchesInFlight = f.batches
	if f.embedded || f.members != "" {
		// A service of the run's own: TLS only with --embedded-tls (the
		// groups of --members serve plaintext on loopback).
		cfg.TLS = f.tlsClient
	}
	var cs []*client.Client
	for range n {
		c, err := client.New(cfg)
		if err != nil {
			closeClients(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeClients(cs []*client.Client) {
	for _, c := range cs {
		c.Close()
	}
}

func (f *benchMetaFlags) config() (metabench.Config, error) {
	threads, err := metabench.ParseThreads(f.threads)
	if err != nil {
		return metabench.Config{}, fmt.Errorf("--threads: %w", err)
	}
	ops, err := metabench.ParseOps(f.ops)
	if err != nil {
		return metabench.Config{}, fmt.Errorf("--ops: %w", err)
	}
	if f.files < 1 || f.conns < 1 || f.listPasses < 1 {
		return metabench.Config{}, errors.New("--files, --conns and --list-passes must be at least 1")
	}
	if f.embedded && f.meta != "" {
		return metabench.Config{}, errors.New("--embedded and --meta exclude each other")
	}
	if err := f.validateEmbeddedUser(); err != nil {
		return metabench.Config{}, err
	}
	dir := f.dir
	if dir == "" {
		dir = "/bench-" + time.Now().Format("20060102-150405")
	}
	return metabench.Config{Dir: dir, Threads: threads, Files: f.files, Ops: ops,
		ListPasses: f.listPasses, Keep: f.keep}, nil
}

// startEmbedded starts the in-process member and returns how to stop it
// (and remove its temporary data directory).
func (f *benchMetaFlags) startEmbedded(ctx context.Context, stderr io.Writer) (*metabench.Embedded, func(), error) {
	dir, temp := f.dataDir, f.dataDir == ""
	if temp {
		var err error
		if dir, err = os.MkdirTemp("", "strata-bench-meta-"); err != nil {
			return nil, nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if temp {
			os.RemoveAll(dir)
		}
	}
	// The process is the service's: it runs with the service's settings.
	tuneGC(0)
	var serverTLS *tls.Config
	if f.embeddedTLS {
		files, err := tlsconf.Dev(filepath.Join(dir, "tls"))
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		serverTLS, err = files.Server()
		if err == nil {
			f.tlsClient, err = files.Client()
		}
		if err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	var edits []func(*metaserver.Config)
	if f.embeddedMetrics {
		edits = append(edits, embeddedMetrics(ctx))
	}
	emb, err := metabench.StartEmbedded(ctx, dir, f.noAuth, serverTLS, edits...)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "embedded namespace service on %s, data in %s\n", emb.Addr(), dir)
	}
	return emb, func() {
		if err := emb.Close(); err != nil && !f.quiet {
			fmt.Fprintln(stderr, err)
		}
		cleanup()
	}, nil
}

// phaseRecorders returns an OnPhase hook that writes a CPU profile (into
// cpuDir) and an execution trace (into traceDir) of each timed phase, named
// <op>-<threads>t.pprof and .trace; nil when neither is asked for.
func phaseRecorders(cpuDir, traceDir string, stderr io.Writer) (func(metabench.Op, int) func(), error) {
	for _, dir := range []string{cpuDir, traceDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if cpuDir == "" && traceDir == "" {
		return nil, nil
	}
	return func(op metabench.Op, threads int) func() {
		name := string(op) + "-" + strconv.Itoa(threads) + "t"
		var stops []func()
		if cpuDir != "" {
			stops = append(stops, record(filepath.Join(cpuDir, name+".pprof"), pprof.StartCPUProfile, pprof.StopCPUProfile, stderr))
		}
		if traceDir != "" {
			stops = append(stops, record(filepath.Join(traceDir, name+".trace"), trace.Start, trace.Stop, stderr))
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}, nil
}

// record starts a recording (a CPU profile, a trace) into path and returns
// what stops it; failures are reported on stderr, not fatal.
func record(path string, start func(io.Writer) error, stop func(), stderr io.Writer) func() {
	out, err := os.Create(path)
	if err == nil {
		if err = start(out); err != nil {
			out.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return func() {}
	}
	return func() {
		stop()
		if err := out.Close(); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
		}
	}
}

// report is what both benchmarks produce.
type report interface {
	WriteTable(io.Writer) error
	WriteJSON(io.Writer) error
}

// writeReport prints the table (unless the JSON goes to stdout) and writes
// the JSON report if asked.
func writeReport(rep report, jsonOut string, stdout io.Writer) error {
	switch jsonOut {
	case "":
		return rep.WriteTable(stdout)
	case "-":
		return rep.WriteJSON(stdout)
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	out, err := os.Create(jsonOut)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
