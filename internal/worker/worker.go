// Package worker is the cache worker: it cuts written files into immutable
// blocks and uploads them to the namespace's bucket, and serves reads of
// blocks from its local-disk cache, fetching what it misses from the bucket
// with parallel ranged GETs and read-ahead. Clients on the same host read
// cached pages themselves through its short-circuit Unix socket. It keeps no
// metadata: the namespace service decides what blocks a file has.
package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Config configures a worker.
type Config struct {
	// StateDir holds the worker's id and, unless set apart, its socket.
	StateDir string
	// Advertise is the address clients dial; empty means the listener's.
	Advertise string
	// UnixSocket is the short-circuit socket path; empty means
	// StateDir/worker.sock.
	UnixSocket string
	// Meta is the namespace service address.
	Meta string
	// Token is what the worker proves itself with to the namespace service
	// (a superuser's: docs/security.md); empty sends none.
	Token string
	Cache cache.Config
	// UploadConcurrency bounds the blocks of one write in flight to the
	// bucket; FetchConcurrency the ranged GETs of one miss.
	UploadConcurrency, FetchConcurrency int
	// FetchChunk is the size of one ranged GET; ReadAhead what a sequential
	// reader gets fetched ahead of it.
	FetchChunk, ReadAhead int64
	// ReadAheadInFlight bounds the bytes read-ahead has asked of the bucket
	// and not yet received, over all blocks; a new read-ahead GET starts
	// as soon as the bytes in flight allow it (see byteBudget). Default: two
	// fetch chunks, which keeps a 250 MB/s link with 5 ms per request busy
	// (bandwidth × latency is 1.25 MB).
	ReadAheadInFlight int64
	// OpenStore opens a bucket by URI; nil means objstore.OpenRetrying.
	// Tests wrap stores with faults here.
	OpenStore func(ctx context.Context, uri string) (object.Store, error)
	Log       *slog.Logger
}

func (c *Config) setDefaults() {
	if c.UploadConcurrency == 0 {
		c.UploadConcurrency = 4
	}
	if c.FetchConcurrency == 0 {
		c.FetchConcurrency = 4
	}
	if c.FetchChunk == 0 {
		c.FetchChunk = 4 << 20
	}
	if c.ReadAhead == 0 {
		c.ReadAhead = 16 << 20
	}
	if c.ReadAheadInFlight == 0 {
		c.ReadAheadInFlight = 2 * c.FetchChunk
	}
	if c.UnixSocket == "" {
		c.UnixSocket = filepath.Join(c.StateDir, "worker.sock")
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// Worker is a running cache worker.
type Worker struct {
	pb.UnimplementedWorkerServiceServer

	cfg    Config
	id     string
	host   string
	cache  *cache.Cache
	stores objstore.Set
	fetch  fetchGroup
	ahead  *byteBudget // read-ahead's bytes outstanding from the bucket
	seq    sequentialTracker
	stats  counters
}

type counters struct {
	rpcBytesRead, shortCircuitBytes, shortCircuitOpens atomic.Uint64
	bucketBytesRead, bucketBytesWritten, blocksWritten atomic.Uint64
	readAheads                                         atomic.Uint64 // read-aheads started
}

// New opens the worker's cache and identity.
func New(cfg Config) (*Worker, error) {
	cfg.setDefaults()
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, err
	}
	id, err := loadID(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	c, err := cache.Open(cfg.Cache)
	if err != nil {
		return nil, fmt.Errorf("worker: cache: %w", err)
	}
	host, _ := os.Hostname()
	w := &Worker{cfg: cfg, id: id, host: host, cache: c, ahead: newByteBudget(cfg.ReadAheadInFlight)}
	w.stores.Open = cfg.OpenStore
	return w, nil
}

// loadID returns the worker's persistent id, creating it on first start.
func loadID(dir string) (string, error) {
	path := filepath.Join(dir, "worker-id")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "w-" + hex.EncodeToString(b[:])
	return id, os.WriteFile(path, []byte(id+"\n"), 0o644)
}

// ID returns the worker's id.
func (w *Worker) ID() string { return w.id }

// Serve serves gRPC on lis and short-circuit reads on the Unix socket, and
// heartbeats to the namespace service, until ctx ends.
func (w *Worker) Serve(ctx context.Context, lis net.Listener) error {
	_ = os.Remove(w.cfg.UnixSocket)
	ulis, err := net.ListenUnix("unix", &net.UnixAddr{Name: w.cfg.UnixSocket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("worker: short-circuit socket: %w", err)
	}
	defer ulis.Close()
	g := grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(16 << 20)}, rpcerr.ServerOptions()...)...)
	pb.RegisterWorkerServiceServer(g, w)
	advertise := w.cfg.Advertise
	if advertise == "" {
		advertise = lis.Addr().String()
	}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if w.cfg.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(token.Credentials(w.cfg.Token)))
	}
	meta, err := grpc.NewClient(w.cfg.Meta, dial...)
	if err != nil {
		return err
	}
	defer meta.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.serveShortCircuit(ctx, ulis) }()
	go func() { defer wg.Done(); w.heartbeatLoop(ctx, pb.NewMetaServiceClient(meta), advertise) }()
	go func() { <-ctx.Done(); g.Stop(); ulis.Close() }()
	err = g.Serve(lis)
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Close releases the cache.
func (w *Worker) Close() error { return w.cache.Close() }

func (w *Worker) heartbeatLoop(ctx context.Context, meta pb.MetaServiceClient, advertise string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := meta.Heartbeat(hctx, &pb.HeartbeatRequest{Worker: &pb.WorkerInfo{Id: w.id, Address: advertise,
			Host: w.host, UnixSocket: w.cfg.UnixSocket, Stats: w.statsProto()}})
		cancel()
		if err != nil && ctx.Err() == nil {
			w.cfg.Log.Warn("heartbeat to the namespace service failed", "err", err)
		}
		w.dropBlocks(resp.GetDropped())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// dropBlocks drops from the cache blocks that were deleted from their
// buckets: nothing will read them again.
func (w *Worker) dropBlocks(refs []*pb.BlockRef) {
	for _, r := range refs {
		w.cache.Drop(blocks.CacheKey(r.GetInodeId(), r.GetBlockId()))
	}
}

// Stats implements WorkerService.
func (w *Worker) Stats(context.Context, *pb.WorkerStatsRequest) (*pb.WorkerStats, error) {
	return w.statsProto(), nil
}

func (w *Worker) statsProto() *pb.WorkerStats {
	cs := w.cache.Stats()
	return &pb.WorkerStats{WorkerId: w.id, Capacity: uint64(cs.Capacity), Used: uint64(cs.Used),
		CachedBlocks: uint64(cs.Blocks), Hits: cs.Hits, Misses: cs.Misses, Evictions: cs.Evictions,
		Corruptions: cs.Corruptions, RpcBytesRead: w.stats.rpcBytesRead.Load(),
		ShortCircuitBytes: w.stats.shortCircuitBytes.Load(), ShortCircuitOpens: w.stats.shortCircuitOpens.Load(),
		BucketBytesRead: w.stats.bucketBytesRead.Load(), BucketBytesWritten: w.stats.bucketBytesWritten.Load(),
		BlocksWritten: w.stats.blocksWritten.Load()}
}

// DropCache empties the cache (strata admin cache free): every block is read
// from the bucket again on its next read.
func (w *Worker) DropCache() {
	for _, k := range w.cache.Keys() {
		w.cache.Drop(k)
	}
}
