package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/bench/databench"
	"github.com/stratafs/strata/internal/tlsconf"
)

// benchDataFlags are the settings of "strata bench data".
type benchDataFlags struct {
	clientFlags
	mode                                string
	embeddedTLS                         bool
	dir, path                           string
	files                               int
	fileSize, blockSize, ioSize         string
	readers, repeat                     int
	randomSizes                         string
	randomReads                         int
	blockSizes                          string
	phases                              string
	bandwidth                           string
	latency                             time.Duration
	cacheSize, pageSize, chunkSize      string
	fetchChunk, readAhead, aheadFlight  string
	fetchConcurrency, uploadConcurrency int
	verify, keep, quiet, verbose        bool
	cacheNoSync                         bool
	seed                                uint64
	jsonOut, cpuProfile, profileDir     string
}

// seedNodes is how many compute nodes shared the bucket's link in seed 000
// (1 master + 5 core nodes): the default bandwidth is one node's share.
const seedNodes = 5

const benchDataLong = `Measure Strata's data path against the local disk and the bucket's link, three
ways in one run (four in cache mode), and print MB/s (10^6 bytes/s), ops/s,
latencies and ratios:

  cold    Strata reads from the bucket, through the bandwidth limiter: the
          worker's cache is emptied before every round
  warm    Strata reads from the worker's cache (short-circuit: this process
          reads the cache files itself, no bytes through the worker)
  raw     the same bytes in plain files on the same local file system, read
          with read/pread: the baseline
  direct  (--mode cache) the same objects read straight from the bucket
          through the same limiter, with no Strata, as an S3 client reads
          them: sequentially as S3A's prefetching stream does (ranged GETs
          of 8 MiB, 8 in flight per stream), randomly one GET of exactly
          the bytes asked for

The targets (docs: DESIGN.md, performance targets): warm sequential reads at
least 90% of raw, cold sequential reads at least 90% of the link's bandwidth.

--mode picks the namespace: block (the default: Strata writes the files,
cut into blocks that are objects of its own) or cache (the embedded
cluster's namespace "cache" is a cache-mode view, sync interval -1, of the
same bucket directory; the files are objects the benchmark puts straight
into the bucket, multipart, as any S3 client would, and Strata meets them
when it first opens them; they are then loaded into the worker's cache,
untimed, as "strata admin load" does, for the warm reads). In cache mode
the writes are the direct puts (through the limiter), --block-size is the
namespace's, and there is no sweep; it needs the embedded cluster.

What runs, in order (--phases picks among seq, disk and random):
  write    --files files of --file-size with --block-size, through Strata
           (the worker cuts blocks, uploads them, caches them; cache mode:
           put straight into the bucket) and as raw files (written,
           fsynced); every round writes new files
  seq      sequential reads of every file, --io-size bytes per call through
           the client's io.Reader: cold, (direct,) warm, raw. Strata's cache
           files and the raw files are both in the OS page cache here.
  disk     warm and raw sequential reads again, each with its files dropped
           from the OS page cache before the round (posix_fadvise DONTNEED:
           no root needed, no other file touched): both from the disk
  random   --random-reads reads of each --random-sizes size at offsets
           aligned to the size: cold (each read to its own 1 MiB slot, so
           that none is served by an earlier fetch; direct reads the same
           offsets), then warm and raw
  sweep    with --block-sizes, for each block size: writes, then cold and
           warm sequential reads of those files

Each measurement runs --repeat rounds and reports the median; the ways
take turns round by round, so that other load on the machine hits them
alike. Sequential work gives each file to one of --readers goroutines (so
min(--readers, --files) streams); random reads run --readers goroutines.
Every read is checked against the written pattern (its first and last
bytes; all of it with --verify): a wrong byte ends the run.

The cluster: by default one in this process (a namespace service and one
worker, short-circuit socket on this host), its data under --dir, its
bucket a local directory behind a limiter of --bucket-bandwidth each way
and --bucket-latency per request, then the retry layer. The default,
250MB, is seed 000's 10 Gb/s OSS link shared by its 5 compute nodes: one
node's share, this machine playing one node (20 Gb/s: 500MB, 50 Gb/s:
1250MB). The raw files go to --dir too: the same file system as the cache.
With --meta the benchmark uses a running cluster instead ($STRATA_META is
not consulted, so that an exported variable cannot change the experiment):
its link is unknown and its caches cannot be emptied, so the cold phases
are skipped; warm reads are short-circuit only if a worker runs on this
host.

Output: a header (machine: cores, memory, free disk, load, Go version;
cluster; link; parameters), tables, the targets and whether they are met,
in cache mode cold sequential reads as a share of the direct ones, and how
many bytes warm reads moved over RPC (0 when all short-circuit). Columns
bucket/rpc/lent MB are the workers' counters per round (lent: the cache
file bytes lent to short-circuit readers, who may read them in later rounds
too; direct rows: the benchmark's own bytes from or to the bucket); cpu s/GB is this process's CPU time per 10^9 bytes (steadier
than MB/s on a busy machine); in RAM is the share of the local files a round reads that was in
the page cache as it began (mincore). Progress goes to stderr. --json FILE writes the report as JSON too ("-": to stdout
instead of the table).

Profiling: --cpuprofile FILE profiles the whole process, the embedded
cluster included; --cpuprofile-dir DIR writes one profile per timed round.

Examples:
  strata bench data
  strata bench data --block-sizes 16MiB,32MiB,64MiB,128MiB --phases seq
  strata bench data --bucket-bandwidth 1250MB --files 4 --file-size 1GiB
  strata bench data --phases seq --repeat 5 --cpuprofile /tmp/data.pprof
  strata bench data --meta 127.0.0.1:7700 --phases seq,random
  strata bench data --mode cache
  strata bench data --mode cache --files 4 --file-size 256MiB --phases seq`

func benchDataCmd() *cobra.Command {
	var f benchDataFlags
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Data path benchmark: sequential and random reads cold, warm, against the raw disk (and, in cache mode, direct from the bucket)",
		Long:  benchDataLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchData(cmd.Context(), &f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "mode", "block", "namespace mode: block, or cache (objects put straight into the bucket, read through a cache-mode namespace, and read directly)")
	fl.StringVar(&f.dir, "dir", "", "local scratch directory for the raw files and the embedded cluster (default: a new temporary one, removed afterwards)")
	fl.StringVar(&f.path, "path", "", "Strata directory of the run's files; must not exist (default /bench-data-<timestamp>)")
	fl.IntVar(&f.files, "files", 2, "files to write and read")
	fl.StringVar(&f.fileSize, "file-size", "256MiB", "size of each file")
	fl.StringVar(&f.blockSize, "block-size", "", "block size of the files (default: the service's, 64MiB embedded; cache mode: the namespace's)")
	fl.StringVar(&f.ioSize, "io-size", "1MiB", "bytes per sequential read or write call")
	fl.IntVar(&f.readers, "readers", 4, "concurrent readers (and writers); sequential phases use min(readers, files)")
	fl.IntVar(&f.repeat, "repeat", 3, "rounds per measurement; the median is reported")
	fl.StringVar(&f.randomSizes, "random-sizes", "4KiB,64KiB,1MiB", "sizes of random reads, comma-separated")
	fl.IntVar(&f.randomReads, "random-reads", 500, "random reads per size, way and round (cold: at most one per 1 MiB of data)")
	fl.StringVar(&f.blockSizes, "block-sizes", "", "block sizes to sweep, comma-separated (e.g. 16MiB,64MiB,128MiB); empty: no sweep (block mode only)")
	fl.StringVar(&f.phases, "phases", "seq,disk,random", "phases to run: seq, disk, random (the write always runs)")
	fl.StringVar(&f.bandwidth, "bucket-bandwidth", "250MB", "embedded: the bucket link's bandwidth each way, per second (0: unlimited)")
	fl.DurationVar(&f.latency, "bucket-latency", 5*time.Millisecond, "embedded: latency added to every bucket request")
	fl.StringVar(&f.cacheSize, "cache-size", "", "embedded: the worker's cache capacity (default: enough for every file of the run)")
	fl.StringVar(&f.pageSize, "page-size", "1MiB", "embedded: the cache's page size")
	fl.StringVar(&f.chunkSize, "chunk-size", "", "embedded: the cache's checksum unit, a divisor of the page size (default: the cache's, 64KiB or the page size if smaller)")
	fl.StringVar(&f.fetchChunk, "fetch-chunk", "", "embedded: the worker's ranged GET size (default: the worker's, 4MiB)")
	fl.StringVar(&f.readAhead, "read-ahead", "", "embedded: the worker's read-ahead (default: the worker's, 16MiB)")
	fl.StringVar(&f.aheadFlight, "read-ahead-in-flight", "", "embedded: the bytes the worker's read-ahead may have asked of the bucket and not yet received, over all blocks (default: the worker's, two fetch chunks)")
	fl.IntVar(&f.fetchConcurrency, "fetch-concurrency", 0, "embedded: the worker's concurrent GETs per miss (default: the worker's, 4)")
	fl.IntVar(&f.uploadConcurrency, "upload-concurrency", 0, "embedded: the worker's concurrent block uploads per write (default: the worker's, 4)")
	fl.BoolVar(&f.cacheNoSync, "cache-nosync", false, "embedded: the cache skips its fdatasync before recording pages (see internal/cache Config.NoSync)")
	fl.BoolVar(&f.verify, "verify", false, "check every byte read, not only the ends of each read")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the content and the random offsets")
	fl.StringVar(&f.jsonOut, "json", "", `also write the report as JSON to this file ("-": stdout, instead of the table)`)
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fl.StringVar(&f.profileDir, "cpuprofile-dir", "", "write a CPU profile of each timed round into this directory")
	fl.BoolVar(&f.keep, "keep", false, "leave the files (and --dir) in place")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fl.BoolVar(&f.verbose, "verbose", false, "embedded: log the service's and worker's info messages (default: warnings only)")
	fl.BoolVar(&f.embeddedTLS, "embedded-tls", false, "embedded: serve and connect with TLS, on a CA and certificate of the run's own (default: plaintext)")
	return cmd
}

func runBenchData(ctx context.Context, f *benchDataFlags, stdout, stderr io.Writer) (err error) {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	if !f.quiet {
		cfg.Progress = stderr
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, removeDir, err := f.scratchDir()
	if err != nil {
		return err
	}
	defer removeDir()
	cfg.RawDir = filepath.Join(dir, "raw")
	cluster, closeCluster, err := f.cluster(ctx, dir, cfg, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeCluster()) }()
	cfg.Cluster = cluster
	if f.profileDir != "" {
		if cfg.OnPhase, err = roundProfiler(f.profileDir, stderr); err != nil {
			return err
		}
	}
	if f.cpuProfile != "" {
		stopProfile, err := startProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	rep, err := databench.Run(ctx, cfg)
	if rep != nil && len(rep.Results) > 0 {
		if werr := writeReport(rep, f.jsonOut, stdout); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

func (f *benchDataFlags) config() (databench.Config, error) {
	cfg := databench.Config{Dir: f.path, Files: f.files, Readers: f.readers, Repeat: f.repeat,
		RandomReads: f.randomReads, Verify: f.verify, Seed: f.seed, Keep: f.keep}
	if f.files < 1 || f.readers < 1 || f.repeat < 1 || f.randomReads < 1 {
		return cfg, errors.New("--files, --readers, --repeat and --random-reads must be at least 1")
	}
	if f.cpuProfile != "" && f.profileDir != "" {
		return cfg, errors.New("--cpuprofile and --cpuprofile-dir exclude each other (one CPU profile at a time)")
	}
	var err error
	if cfg.Mode, err = databench.ParseMode(f.mode); err != nil {
		return cfg, fmt.Errorf("--mode: %w", err)
	}
	if cfg.Mode == databench.ModeCache && f.meta != "" {
		return cfg, errors.New("--mode cache needs the embedded cluster (no --meta): it puts the objects into the bucket itself")
	}
	for _, s := range []struct {
		flag, val string
		dst       *int64
	}{{"--file-size", f.fileSize, &cfg.FileSize}, {"--block-size", f.blockSize, &cfg.BlockSize}} {
		if s.val == "" {
			continue
		}
		if *s.dst, err = parseBytes(s.val); err != nil || *s.dst <= 0 {
			return cfg, fmt.Errorf("%s %q: not a size", s.flag, s.val)
		}
	}
	ioSize, err := parseBytes(f.ioSize)
	if err != nil || ioSize <= 0 || ioSize > 1<<30 {
		return cfg, fmt.Errorf("--io-size %q: not a size up to 1GiB", f.ioSize)
	}
	cfg.IOSize = int(ioSize)
	sizes, err := parseSizes(f.randomSizes)
	if err != nil {
		return cfg, fmt.Errorf("--random-sizes: %w", err)
	}
	for _, s := range sizes {
		if s > 1<<30 {
			return cfg, fmt.Errorf("--random-sizes: %d is more than 1GiB", s)
		}
		cfg.RandomSizes = append(cfg.RandomSizes, int(s))
	}
	if cfg.BlockSizes, err = parseSizes(f.blockSizes); err != nil {
		return cfg, fmt.Errorf("--block-sizes: %w", err)
	}
	if cfg.Mode == databench.ModeCache && len(cfg.BlockSizes) > 0 {
		return cfg, errors.New("--block-sizes is block mode's: in cache mode every object's blocks have the namespace's block size (--block-size)")
	}
	if cfg.Phases, err = databench.ParsePhases(f.phases); err != nil {
		return cfg, fmt.Errorf("--phases: %w", err)
	}
	if cfg.Phases == nil {
		cfg.Phases = []databench.Phase{}
	}
	return cfg, nil
}

// parseSizes reads a comma-separated list of sizes.
func parseSizes(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := parseBytes(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q: not a size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// scratchDir returns --dir, or a new temporary directory, and how to
// remove what the run made there.
func (f *benchDataFlags) scratchDir() (string, func(), error) {
	if f.dir != "" {
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			return "", nil, err
		}
		abs, err := filepath.Abs(f.dir)
		if err != nil {
			return "", nil, err
		}
		return abs, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "strata-bench-data-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() {
		if !f.keep {
			os.RemoveAll(dir)
		}
	}, nil
}

// cluster connects to --meta, or starts the embedded cluster under dir.
func (f *benchDataFlags) cluster(ctx context.Context, dir string, cfg databench.Config, stderr io.Writer) (databench.Cluster, func() error, error) {
	if f.meta != "" {
		c, err := f.client()
		if err != nil {
			return nil, nil, err
		}
		return &databench.Remote{C: c, Addr: f.meta}, c.Close, nil
	}
	ecfg, err := f.embeddedConfig(dir, cfg, stderr)
	if err != nil {
		return nil, nil, err
	}
	emb, err := databench.StartEmbedded(ctx, ecfg)
	if err != nil {
		return nil, nil, err
	}
	return emb, emb.Close, nil
}

func (f *benchDataFlags) embeddedConfig(dir string, cfg databench.Config, stderr io.Writer) (databench.EmbeddedConfig, error) {
	var err error
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	e := databench.EmbeddedConfig{Dir: filepath.Join(dir, "cluster"), Mode: cfg.Mode,
		FetchConcurrency: f.fetchConcurrency, UploadConcurrency: f.uploadConcurrency, CacheNoSync: f.cacheNoSync,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))}
	if cfg.Mode == databench.ModeCache {
		// The blocks of objects found in the bucket have the namespace's
		// block size: the files' own is for files Strata writes.
		e.BlockSize = cfg.BlockSize
	}
	e.Link.Latency = f.latency
	if f.embeddedTLS {
		if e.TLS, err = tlsconf.Dev(filepath.Join(dir, "tls")); err != nil {
			return e, err
		}
	}
	bw, err := parseBytes(f.bandwidth)
	if err != nil {
		return e, fmt.Errorf("--bucket-bandwidth: %w", err)
	}
	e.Link.Bandwidth = float64(bw)
	if bw > 0 {
		e.Link.Scaling = fmt.Sprintf("= the share of one of seed 000's %d compute nodes (this machine plays one) of a %.3g Gb/s OSS link "+
			"(10 Gb/s: --bucket-bandwidth 250MB, 20 Gb/s: 500MB, 50 Gb/s: 1250MB)", seedNodes, float64(bw)*8*seedNodes/1e9)
	}
	for _, s := range []struct {
		flag, val string
		dst       *int64
	}{{"--cache-size", f.cacheSize, &e.CacheBytes}, {"--page-size", f.pageSize, &e.PageSize},
		{"--chunk-size", f.chunkSize, &e.ChunkSize},
		{"--fetch-chunk", f.fetchChunk, &e.FetchChunk}, {"--read-ahead", f.readAhead, &e.ReadAhead},
		{"--read-ahead-in-flight", f.aheadFlight, &e.ReadAheadInFlight}} {
		if s.val == "" {
			continue
		}
		if *s.dst, err = parseBytes(s.val); err != nil || *s.dst <= 0 {
			return e, fmt.Errorf("%s %q: not a size", s.flag, s.val)
		}
	}
	if e.CacheBytes == 0 {
		// Every file the run writes (each write round's, the sweep's),
		// with room to spare below the cache's high watermark: nothing the
		// reads need is evicted.
		data := int64(cfg.Files) * max(cfg.FileSize, 1)
		e.CacheBytes = 2*data*int64(1+cfg.Repeat)*int64(1+len(cfg.BlockSizes)) + 1<<30
	}
	return e, nil
}

// startProfile profiles the whole process into path until the returned
// function is called.
func startProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}

// roundProfiler returns an OnPhase hook that writes one CPU profile per
// timed round into dir, named after the measurement and the round.
func roundProfiler(dir string, stderr io.Writer) (func(string) func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unsafe := regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	seen := map[string]int{}
	return func(name string) func() {
		base := unsafe.ReplaceAllString(name, "-")
		seen[base]++
		path := filepath.Join(dir, fmt.Sprintf("%s.%d.pprof", base, seen[base]))
		stop, err := startProfile(path)
		if err != nil {
			fmt.Fprintf(stderr, "cpu profile %s: %v\n", path, err)
			return func() {}
		}
		return stop
	}, nil
}
