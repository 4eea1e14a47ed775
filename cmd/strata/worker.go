package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metrics"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/token"
	"github.com/stratafs/strata/internal/worker"
)

// workerFlags are the settings of a cache worker.
type workerFlags struct {
	listen    string
	advertise string
	meta      string
	stateDir  string
	cacheDirs []string
	cacheSize string
	pageSize  string
	chunkSize string
	finePage  string
	// The worker's read-ahead for sequential readers, and the bytes it
	// may have asked of the bucket and not yet received; "": the defaults.
	readAhead, aheadInFlight string
	idleFill                 bool
	socket                   string
	cacheSync                bool
	// Bounds of a request to a bucket that stops answering.
	bucketStall, bucketBudget time.Duration
	abortInterval             time.Duration
	tls                       tlsFlags
	conns                     connFlags
	obs                       obsFlags
	tokenFile                 string
}

// register adds the worker's flags to cmd, each name prefixed with prefix;
// cacheSize is --cache-size's default.
func (f *workerFlags) register(cmd *cobra.Command, prefix, cacheSize string) {
	fl := cmd.Flags()
	stateDir := "STATE-DIR" // the dev server's is DATA-DIR/worker
	if prefix != "" {
		stateDir = "DATA-DIR/worker"
	}
	if prefix == "" {
		fl.StringVar(&f.listen, "listen", "127.0.0.1:7701", "address to serve the worker's gRPC on")
		fl.StringVar(&f.advertise, "advertise", "", "address clients dial (default: the listen address)")
		fl.StringVar(&f.meta, "meta", "", "namespace service address HOST:PORT, or every member's, comma-separated: the worker heartbeats to each and follows the leader (default $STRATA_META or "+defaultMeta+")")
		fl.StringVar(&f.stateDir, "state-dir", "./strata-worker", "directory for the worker's id and socket")
		f.tls.register(cmd, true)
		f.conns.register(cmd)
		f.obs.register(cmd)
		fl.StringVar(&f.tokenFile, "token-file", "", "file holding the token the worker proves itself with to the "+
			"namespace service, a superuser's (default $STRATA_TOKEN's token, else $STRATA_TOKEN_FILE, else ~/.strata/token)")
	}
	fl.StringSliceVar(&f.cacheDirs, prefix+"cache-dir", nil, "cache directory, repeatable (one per disk; default "+stateDir+"/cache)")
	fl.StringVar(&f.cacheSize, prefix+"cache-size", cacheSize, "cache capacity per directory (e.g. 512MiB, 20GiB); more than the directory's disk can hold is clamped to that, with a warning")
	fl.StringVar(&f.pageSize, prefix+"page-size", "1MiB", "cache granularity: the smallest range fetched for a sequential reader")
	fl.StringVar(&f.finePage, prefix+"fine-page-size", "", "cache granularity of the blocks a random reader (columnar formats, positioned reads) reads first: its cold reads fetch their range rounded to this (a multiple of 4KiB dividing the page size; default 16KiB)")
	fl.StringVar(&f.readAhead, prefix+"read-ahead", "", "how far ahead of a sequential reader to fetch from the bucket (default 16MiB)")
	fl.StringVar(&f.aheadInFlight, prefix+"read-ahead-in-flight", "", "the bytes read-ahead may have asked of the bucket and not yet received, over all readers: more keeps a fast link busier, for memory and a random reader taken for sequential fetching more (default 8MiB, two 4 MiB ranged GETs)")
	fl.BoolVar(&f.idleFill, prefix+"idle-fill", false, "fetch the rest of a block a random reader read cold in the background, 256KiB at a time, only while no read waits for the bucket")
	fl.StringVar(&f.chunkSize, prefix+"chunk-size", "", "cache checksum unit: a CRC32C per chunk of a page, so that a small read checks the chunks it touches (a divisor of the page size; default 64KiB, or the page size if smaller)")
	fl.StringVar(&f.socket, prefix+"unix-socket", "", "short-circuit socket path (default "+stateDir+"/worker.sock)")
	fl.DurationVar(&f.bucketStall, prefix+"bucket-stall-timeout", objstore.StallTimeout, "abandon (and retry) a bucket request that sends or receives no byte for this long")
	fl.DurationVar(&f.bucketBudget, prefix+"bucket-retry-budget", objstore.RetryBudget, "start no retry of a bucket request this long after its first attempt (or a read's last byte): a hung bucket fails a request within about this plus --"+prefix+"bucket-stall-timeout")
	fl.DurationVar(&f.abortInterval, prefix+"bucket-abort-interval", 30*time.Second, "how often to try again to abort the multipart uploads of failed writes while the bucket does not answer")
	fl.BoolVar(&f.cacheSync, prefix+"cache-sync", false, "fdatasync cached pages before recording them (off by default: every cached page is in the bucket too, and every read checks its CRC, so a page a power cut lost is refetched)")
}

// idleFillPiece is the size of --idle-fill's fetches: at 8 MB/s, a read
// that comes while one is under way waits 33 ms at most.
const idleFillPiece = 256 << 10

func (f *workerFlags) config() (worker.Config, error) {
	size, err := parseBytes(f.cacheSize)
	if err != nil {
		return worker.Config{}, fmt.Errorf("--cache-size: %w", err)
	}
	page, err := parseBytes(f.pageSize)
	if err != nil {
		return worker.Config{}, fmt.Errorf("--page-size: %w", err)
	}
	var chunk int64
	if f.chunkSize != "" {
		if chunk, err = parseBytes(f.chunkSize); err != nil {
			return worker.Config{}, fmt.Errorf("--chunk-size: %w", err)
		}
	}
	var fine int64
	if f.finePage != "" {
		if fine, err = parseBytes(f.finePage); err != nil {
			return worker.Config{}, fmt.Errorf("--fine-page-size: %w", err)
		}
	}
	var ahead, inFlight int64
	for _, v := range []struct {
		flag, value string
		to          *int64
	}{{"--read-ahead", f.readAhead, &ahead}, {"--read-ahead-in-flight", f.aheadInFlight, &inFlight}} {
		if v.value == "" {
			continue
		}
		if *v.to, err = parseBytes(v.value); err != nil || *v.to <= 0 {
			return worker.Config{}, usagef("%s %q: want a positive size, such as 16MiB", v.flag, v.value)
		}
	}
	var idle int64
	if f.idleFill {
		idle = idleFillPiece
	}
	dirs := f.cacheDirs
	if len(dirs) == 0 {
		dirs = []string{filepath.Join(f.stateDir, "cache")}
	}
	if f.bucketStall <= 0 || f.bucketBudget <= 0 {
		return worker.Config{}, fmt.Errorf("--bucket-stall-timeout and --bucket-retry-budget must be positive")
	}
	cfg := worker.Config{StateDir: f.stateDir, Advertise: f.advertise, UnixSocket: f.socket,
		Meta:               metaAddr(f.meta),
		Cache:              cache.Config{PageSize: page, ChunkSize: chunk, FinePageSize: fine, NoSync: !f.cacheSync},
		BucketStallTimeout: f.bucketStall, BucketRetryBudget: f.bucketBudget, AbortRetryInterval: f.abortInterval,
		ReadAhead: ahead, ReadAheadInFlight: inFlight, IdleFillPiece: idle}
	if f.listen != "" { // a worker of its own, not the dev server's (which takes the service's bounds)
		if cfg.Token, err = token.Find(f.tokenFile); err != nil {
			return worker.Config{}, err
		}
		if cfg.Conns, err = f.conns.config(); err != nil {
			return worker.Config{}, err
		}
	}
	for _, d := range dirs {
		cfg.Cache.Dirs = append(cfg.Cache.Dirs, cache.Dir{Path: d, Capacity: size})
	}
	return cfg, nil
}

func workerCmd() *cobra.Command {
	var f workerFlags
	var faults workerFaults
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a cache worker",
		Long: `Run a cache worker: it cuts written files into immutable blocks, uploads
them to the namespace's bucket, and serves reads from a local-disk cache,
fetching misses from the bucket with parallel ranged GETs and read-ahead.
Clients on the same host read cached data themselves through its Unix socket
(short-circuit reads). Run one per compute node; the namespace service
spreads blocks over the live workers by rendezvous hashing.

Its gRPC port holds at most --max-conns connections, --max-conns-per-addr
from one IP address, and its socket as many, --max-conns-per-addr from one
local user; a connection that made no request with a valid block token
within --first-call-timeout of connecting is closed (docs/security.md,
"Connections").

Prometheus metrics (/metrics) are served on --http-listen, by default the
--listen port + 2; slow calls are logged with their trace ids (--slow-call),
as text or JSON (--log-format). See docs/operations.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			if err := faults.apply(&cfg); err != nil {
				return err
			}
			if _, err := client.ParseMembers(cfg.Meta); err != nil {
				return usagef("%s%v", fromEnv(f.meta, "STRATA_META"), err)
			}
			if cfg.TLS, cfg.MetaTLS, err = f.tls.servers(""); err != nil {
				return err
			}
			o, err := f.obs.open()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runWorker(ctx, o, cfg, f.listen, true, faults.arm)
		},
	}
	f.register(cmd, "", "10GiB")
	faults.register(cmd)
	return cmd
}

// runWorker serves a worker on listen until ctx ends, with the process's
// logger and metrics o, and its HTTP listener if web (the dev server's
// worker shares its member's). opened, if not nil, is called once the
// worker has opened its cache.
func runWorker(ctx context.Context, o *observability, cfg worker.Config, listen string, web bool, opened func()) error {
	tuneGC(0)
	o.workerConfig(&cfg)
	// The address first: a start that cannot serve creates nothing.
	lis, err := listenOn(listen)
	if err != nil {
		return err
	}
	w, err := worker.New(cfg)
	if err != nil {
		lis.Close()
		return err
	}
	defer w.Close()
	metrics.NewWorkerReport(o.metrics.Registry, w.Report)
	if web {
		srv, err := o.serveHTTP(lis.Addr().String(), nil, cfg.TLS, nil)
		if err != nil {
			lis.Close()
			return err
		}
		if srv != nil {
			defer srv.Close()
		}
	}
	if opened != nil {
		opened()
	}
	fmt.Fprintf(os.Stderr, "strata: worker %s serving on %s\n", w.ID(), lis.Addr())
	return w.Serve(ctx, lis)
}

// parseBytes reads sizes such as 4096, 64MiB, 10GiB or 1.5GB.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	return int64(v * mult), nil
}
