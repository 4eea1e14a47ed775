package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"os/user"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// metaFlags are the settings of a namespace service member.
type metaFlags struct {
	listen      string
	dataDir     string
	superuser   string
	supergroup  string
	inlineLimit int
	blockSize   string
	blockCache  int64
	hotCache    int64
	leaseSoft   time.Duration
	leaseHard   time.Duration
}

func (f *metaFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7700", "address to serve gRPC on")
	fl.StringVar(&f.dataDir, "data-dir", "./strata-data", "directory for the namespace state and the Raft log")
	fl.StringVar(&f.superuser, "superuser", currentUser(), "user with superuser rights (like the HDFS NameNode's user)")
	fl.StringVar(&f.supergroup, "supergroup", "supergroup", "group whose members are superusers")
	fl.IntVar(&f.inlineLimit, "inline-limit", 4096, "largest file, in bytes, stored inside its inode")
	fl.StringVar(&f.blockSize, "block-size", "64MiB", "block size of files whose writer sets none (see docs/benchmarks.md)")
	fl.Int64Var(&f.blockCache, "block-cache", 256<<20, "pebble block cache, bytes")
	fl.Int64Var(&f.hotCache, "hot-cache", 256<<20, "cache of hot metadata records, bytes")
	fl.DurationVar(&f.leaseSoft, "lease-soft-limit", 60*time.Second, "time after which another writer may take over a file whose writer stopped renewing")
	fl.DurationVar(&f.leaseHard, "lease-hard-limit", 20*time.Minute, "time after which the service closes a file whose writer stopped renewing")
}

func (f *metaFlags) config() (metaserver.Config, error) {
	ns := namespace.DefaultConfig(f.superuser)
	ns.Supergroup, ns.InlineLimit = f.supergroup, f.inlineLimit
	bs, err := parseBytes(f.blockSize)
	if err != nil || bs <= 0 {
		return metaserver.Config{}, fmt.Errorf("--block-size %q: not a size", f.blockSize)
	}
	ns.BlockSize = uint64(bs)
	cfg := metaserver.Config{DataDir: f.dataDir, Namespace: ns, LeaseSoftLimit: f.leaseSoft, LeaseHardLimit: f.leaseHard}
	cfg.Store.BlockCacheBytes, cfg.Store.HotBytes = f.blockCache, f.hotCache
	return cfg, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

func metaCmd() *cobra.Command {
	var f metaFlags
	cmd := &cobra.Command{
		Use:   "meta",
		Short: "Run a namespace service member",
		Long: `Run a member of the namespace service: the Raft-replicated store of every
namespace's directories, files, attributes and leases, served over gRPC.
Its state lives in --data-dir; every acknowledged operation is durable.

Create namespaces with "strata admin ns create NAME --store URI".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			return serveMeta(cmd.Context(), cfg, f.listen, nil)
		},
	}
	f.register(cmd)
	return cmd
}

// serveMeta runs a member until SIGINT or SIGTERM. ensure, if set, runs once
// the member is ready, with its address (the dev server creates its
// namespace and starts its worker there).
func serveMeta(ctx context.Context, cfg metaserver.Config, listen string, ensure func(context.Context, *metaserver.Server, string) error) error {
	tuneGC()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg.Log = log
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	srv, err := metaserver.Open(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	g := grpc.NewServer(serverOptions()...)
	pb.RegisterMetaServiceServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	readyCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(readyCtx); err != nil {
		return err
	}
	if ensure != nil {
		if err := ensure(ctx, srv, lis.Addr().String()); err != nil {
			return err
		}
	}
	log.Info("namespace service ready", "listen", lis.Addr().String(), "data-dir", cfg.DataDir, "startup", time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(os.Stderr, "strata: serving on %s\n", lis.Addr())
	<-ctx.Done()
	log.Info("shutting down")
	return nil
}

// serverOptions are the gRPC settings of Strata's servers: large messages,
// and a fixed pool of stream workers instead of a goroutine (and a fresh,
// growing stack) per call.
func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20), grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0)))}
}

// tuneGC makes the collector run less often in a server process: its heap
// is small next to the memory pebble and the caches hold outside it, and
// collection was a third of the metadata path's CPU. A soft limit keeps the
// heap bounded all the same. GOGC and GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(4 << 30)
	}
}
