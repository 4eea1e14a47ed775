// Package worker is the cache worker: it cuts written files into immutable
// blocks and uploads them to the namespace's bucket, and serves reads of
// blocks from its local-disk cache, fetching what it misses from the bucket
// with parallel ranged GETs and read-ahead. Clients on the same host read
// cached pages themselves through its short-circuit Unix socket. It keeps no
// metadata: the namespace service decides what blocks a file has.
package worker

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
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

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/logevery"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/metered"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/tlsconf"
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
	// Meta is the namespace service's address, or the addresses of its
	// members, comma-separated, as clients take them: the worker
	// heartbeats to every member (see heartbeats).
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
	// IdleFillPiece, if positive, is the size of the fetches that fill,
	// in the background and only while no read waits for a fetch, the rest
	// of the blocks random readers read cold (idlefill.go): a read that
	// comes meanwhile waits at most for one. 0: no idle fill (the
	// default: it takes bytes from the bucket that no reader asked for).
	IdleFillPiece int64
	// OpenStore opens a bucket by URI; nil means objstore.Retrying with
	// objstore.DefaultPolicy, changed by BucketStallTimeout and
	// BucketRetryBudget. Tests wrap stores with faults here.
	OpenStore func(ctx context.Context, uri string) (object.Store, error)
	// BucketStallTimeout abandons a bucket request that moves no byte for
	// this long; BucketRetryBudget is how long the retries of one request
	// may go on (retry.Policy's StallTimeout and MaxElapsed). Defaults:
	// objstore.StallTimeout and objstore.RetryBudget.
	BucketStallTimeout, BucketRetryBudget time.Duration
	// AbortRetryInterval is how often the abort of an abandoned multipart
	// upload is tried again while the bucket refuses it (default 30 s);
	// SweepInterval how often each bucket's uploads are listed for ones
	// abandoned by a worker that died (default 1 h), which are those older
	// than AbandonedUploadAge (default 1 h: a block's upload takes seconds).
	AbortRetryInterval, SweepInterval, AbandonedUploadAge time.Duration
	// TLS, if set, is what the worker serves with; MetaTLS what it
	// connects to the namespace service with, its certificate included
	// (tlsconf). Both nil: plaintext.
	TLS, MetaTLS *tls.Config
	// Conns bounds the connections of the gRPC port and, each local user's
	// counted apart (Key is ignored), of the short-circuit socket
	// (internal/connlimit; the zero value: its defaults). A connection's
	// first request whose block token checks lifts its deadline.
	Conns connlimit.Config
	// Clock is what tokens' expiries are checked against; nil means
	// time.Now.
	Clock func() time.Time
	Log   *slog.Logger
	// Meter, if set, hears every request to the buckets the worker opens
	// itself (OpenStore nil), and every retry (a process's metrics:
	// internal/metrics). Calls and CallStreams, if set, are interceptors
	// of every call, inside the translation of errors into statuses (the
	// calls' metrics and the slow-call log).
	Meter       metered.Meter
	Calls       grpc.UnaryServerInterceptor
	CallStreams grpc.StreamServerInterceptor
	// SlowCall is how long a short-circuit request takes to be logged as
	// slow, with its trace id (default 1 s).
	SlowCall time.Duration
}

func (c *Config) clock() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock()
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
	if c.AbortRetryInterval == 0 {
		c.AbortRetryInterval = 30 * time.Second
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = time.Hour
	}
	if c.AbandonedUploadAge == 0 {
		c.AbandonedUploadAge = time.Hour
	}
	if c.SlowCall <= 0 {
		c.SlowCall = time.Second
	}
}

// openStore opens the bucket uri: with OpenStore, or behind the retry
// layer with the configured bounds. Each bucket's sweep of abandoned
// uploads starts with its first use.
func (w *Worker) openStore(ctx context.Context, uri string) (object.Store, error) {
	open := w.cfg.OpenStore
	if open == nil {
		p := objstore.DefaultPolicy()
		if w.cfg.BucketStallTimeout > 0 {
			p.StallTimeout = w.cfg.BucketStallTimeout
		}
		if w.cfg.BucketRetryBudget > 0 {
			p.MaxElapsed = w.cfg.BucketRetryBudget
		}
		open = objstore.Retrying(p)
		if w.cfg.Meter != nil {
			open = objstore.Metered(p, w.cfg.Meter)
		}
	}
	st, err := open(ctx, uri)
	if err == nil {
		go w.aborts.sweep(uri, st, w.cfg.SweepInterval, w.cfg.AbandonedUploadAge)
	}
	return st, err
}

// Worker is a running cache worker.
type Worker struct {
	pb.UnimplementedWorkerServiceServer

	cfg  Config
	id   string
	host string
	// scKey signs short-circuit hellos (schello.go); its public half goes
	// with the heartbeats.
	scKey  ed25519.PrivateKey
	cache  *cache.Cache
	stores objstore.Set
	fetch  fetchGroup
	ahead  *byteBudget // read-ahead's bytes outstanding from the bucket
	fills  *idleFill   // blocks random readers read cold, filled while idle
	seq    sequentialTracker
	stats  counters
	aborts *aborter
	// cacheErrs rate-limits the log of pages the cache could not store,
	// pinErrs that of pins it refused.
	cacheErrs, pinErrs logevery.Limiter
	trust              trust
	// meta is the namespace service's client, and advertise the address
	// heartbeats give, both set once Serve starts.
	meta      atomic.Pointer[pb.MetaServiceClient]
	advertise string
	// conns bounds the connections of the gRPC port and of the
	// short-circuit socket, set once Serve starts.
	conns atomic.Pointer[[2]*connlimit.Listener]
}

type counters struct {
	// hits and misses count the reads (RPC, one per 1 MiB message, or
	// per request of a random reader; or short-circuit requests) that
	// found their range cached, or had to fetch some of it (or wait for a
	// fetch under way). NB: the cache's
	// own counters count its lookups, which a read makes only once the
	// range is cached.
	hits, misses                                        atomic.Uint64
	rpcBytesRead, shortCircuitBytes, shortCircuitOpens  atomic.Uint64
	bucketBytesRead, bucketBytesWritten, blocksWritten  atomic.Uint64
	shortCircuitBlocksWritten, shortCircuitBytesWritten atomic.Uint64
	readAheads                                          atomic.Uint64 // read-aheads started
	cacheWriteErrors                                    atomic.Uint64 // Puts the cache failed
}

// count counts a read that missed, or did not.
func (c *counters) count(missed bool) {
	if missed {
		c.misses.Add(1)
	} else {
		c.hits.Add(1)
	}
}

// New opens the worker's cache and identity.
func New(cfg Config) (*Worker, error) {
	cfg.setDefaults()
	// NB: 0755, as the socket's directory by default: other users' clients
	// must reach it. The worker's id is no secret.
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
	for _, cl := range c.Clamped() {
		cfg.Log.Warn("the cache's capacity is more than its disk can hold: clamped", "dir", cl.Path,
			"configured", cl.Configured, "capacity", cl.Capacity)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		c.Close()
		return nil, err
	}
	w := &Worker{cfg: cfg, id: id, host: host, scKey: key, cache: c, ahead: newByteBudget(cfg.ReadAheadInFlight),
		aborts: newAborter(cfg.Log, cfg.AbortRetryInterval), fills: newIdleFill(cfg.IdleFillPiece)}
	w.cacheErrs.Every, w.pinErrs.Every = cacheLogEvery, cacheLogEvery
	w.stores.Open = w.openStore
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

// SocketMode is the short-circuit socket's mode: every local user may
// connect (which takes write permission), since what the worker answers
// there is what a block token allows, checked on every request
// (docs/security.md, "The worker's cache files"). NB: the socket would
// otherwise take its mode from the umask, 0755 under the usual 022, which
// lets only the worker's user connect.
const SocketMode = 0o666

// Serve serves gRPC on lis and short-circuit reads on the Unix socket, and
// heartbeats to the namespace service, until ctx ends.
func (w *Worker) Serve(ctx context.Context, lis net.Listener) error {
	members, err := client.ParseMembers(w.cfg.Meta)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	_ = os.Remove(w.cfg.UnixSocket)
	ulis, err := net.ListenUnix("unix", &net.UnixAddr{Name: w.cfg.UnixSocket, Net: "unix"})
	if err != nil {
		return fmt.Errorf("worker: short-circuit socket: %w", err)
	}
	defer ulis.Close()
	if err := os.Chmod(w.cfg.UnixSocket, SocketMode); err != nil {
		return fmt.Errorf("worker: short-circuit socket: %w", err)
	}
	glis, slis := w.bound(lis, ulis)
	opts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(16 << 20)}, serverOptions(w.cfg.Calls, w.cfg.CallStreams)...)
	opts = append(opts, glis.ServerOptions()...)
	g := grpc.NewServer(append(opts, tlsconf.ServerOptions(w.cfg.TLS)...)...)
	pb.RegisterWorkerServiceServer(g, w)
	w.advertise = w.cfg.Advertise
	if w.advertise == "" {
		w.advertise = lis.Addr().String()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.serveShortCircuit(ctx, slis) }()
	hb := w.startHeartbeats(ctx, members, w.advertise)
	go func() { <-ctx.Done(); g.Stop(); ulis.Close() }()
	err = g.Serve(glis)
	wg.Wait()
	hb.wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// bound returns the gRPC port's listener lis and the short-circuit
// socket's ulis bounded by Config.Conns, the socket's per local user.
func (w *Worker) bound(lis, ulis net.Listener) (port, socket *connlimit.Listener) {
	pc, sc := w.cfg.Conns, w.cfg.Conns
	pc.Name, sc.Name, sc.Key = "worker", "worker's short-circuit socket", connlimit.PeerUser
	for _, c := range []*connlimit.Config{&pc, &sc} {
		if c.Log == nil {
			c.Log = w.cfg.Log
		}
	}
	port, socket = connlimit.Listen(lis, pc), connlimit.Listen(ulis, sc)
	w.conns.Store(&[2]*connlimit.Listener{port, socket})
	return port, socket
}

// ConnStats returns the counters of the connections of the gRPC port and
// of the short-circuit socket (zero before Serve).
func (w *Worker) ConnStats() (port, socket connlimit.Stats) {
	if l := w.conns.Load(); l != nil {
		return l[0].Stats(), l[1].Stats()
	}
	return port, socket
}

// Close stops the background aborts and releases the cache.
func (w *Worker) Close() error {
	w.aborts.close()
	w.fills.close()
	return w.cache.Close()
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
		CachedBlocks: uint64(cs.Blocks), Hits: w.stats.hits.Load(), Misses: w.stats.misses.Load(), Evictions: cs.Evictions,
		Corruptions: cs.Corruptions, RpcBytesRead: w.stats.rpcBytesRead.Load(),
		ShortCircuitBytes: w.stats.shortCircuitBytes.Load(), ShortCircuitOpens: w.stats.shortCircuitOpens.Load(),
		BucketBytesRead: w.stats.bucketBytesRead.Load(), BucketBytesWritten: w.stats.bucketBytesWritten.Load(),
		BlocksWritten: w.stats.blocksWritten.Load(), CacheWriteErrors: w.stats.cacheWriteErrors.Load(),
		ShortCircuitBlocksWritten: w.stats.shortCircuitBlocksWritten.Load(),
		ShortCircuitBytesWritten:  w.stats.shortCircuitBytesWritten.Load(),
		PinnedBytes:               uint64(cs.Pinned), PinRefusals: cs.PinRefusals}
}

// Report is what a worker says of itself, for its metrics and status
// page: its counters (as Stats answers them), its cache's, and its ports'
// connections.
type Report struct {
	Stats        *pb.WorkerStats
	Cache        cache.Stats
	Port, Socket connlimit.Stats
}

// Report returns what the worker says of itself now.
func (w *Worker) Report() Report {
	r := Report{Stats: w.statsProto(), Cache: w.cache.Stats()}
	r.Port, r.Socket = w.ConnStats()
	return r
}

// DropCache empties the cache (strata admin cache free): every block is read
// from the bucket again on its next read.
func (w *Worker) DropCache() {
	for _, k := range w.cache.Keys() {
		w.cache.Drop(k)
	}
}
