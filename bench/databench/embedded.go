package databench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/user"
	"path/filepath"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/throttle"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/tlsconf"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// EmbeddedConfig configures an Embedded cluster. Zero values take the
// defaults of the worker and the cache.
type EmbeddedConfig struct {
	// Dir holds everything: meta/ (the namespace service), bucket/ (the
	// bucket), worker/ (the worker's id and socket) and cache/.
	Dir string
	// Link is the limiter between the worker and the bucket; its zero value
	// is an unlimited link.
	Link Link
	// CacheBytes is the cache's capacity (default 10 GiB); PageSize its
	// granularity; ChunkSize its checksum unit (zero: the cache's default).
	CacheBytes, PageSize, ChunkSize int64
	// CacheNoSync skips the cache's fdatasync before it records pages
	// (cache.Config.NoSync).
	CacheNoSync bool
	// BlockSize is the namespace's default block size (default 64 MiB).
	BlockSize int64
	// Worker tuning, passed to worker.Config as they are (zero: the
	// worker's defaults).
	FetchChunk, ReadAhead, ReadAheadInFlight int64
	FetchConcurrency, UploadConcurrency      int
	// TLS, if its files are set, is what the service and the worker serve
	// with and connect to each other with, and the client connects with;
	// the zero value is plaintext.
	TLS tlsconf.Files
	// Log receives the services' logs; nil discards them.
	Log *slog.Logger
	// Mode is the namespace the cluster's client works in: block (the
	// default namespace) or cache, a namespace CacheNamespace in cache
	// mode with sync interval -1 over the same bucket directory.
	Mode Mode
}

// CacheNamespace names the cache-mode namespace of an Embedded cluster in
// ModeCache.
const CacheNamespace = "cache"

// tlsConfigs returns the server's and the client's TLS settings of f, nil
// for plaintext.
func tlsConfigs(f tlsconf.Files) (server, client *tls.Config, err error) {
	if f.Cert == "" {
		return nil, nil, nil
	}
	if server, err = f.Server(); err != nil {
		return nil, nil, err
	}
	client, err = f.Client()
	return server, client, err
}

// Embedded is a namespace service and one worker in this process, served
// over loopback gRPC, with the worker's short-circuit socket on the same
// host as the benchmark's client. The worker's bucket is a local directory
// behind a throttle.Link: the cold phases read through it. In cache mode
// the service reaches the bucket through the link too (its lookups pay
// the link's latency, as they would a remote bucket's), and so does
// Bucket, the benchmark's direct access.
type Embedded struct {
	cfg    EmbeddedConfig
	link   *throttle.Link
	bucket object.Store // cache mode: the bucket, seen directly
	srv    *metaserver.Serving
	w      *worker.Worker
	cancel context.CancelFunc
	served chan struct{}
	c      *client.Client
}

// StartEmbedded starts the cluster and waits until its worker registered.
// The OS user is the superuser, as with "strata server --dev".
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (_ *Embedded, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	su := "root"
	if u, err := user.Current(); err == nil {
		su = u.Username
	}
	ns := statemachine.DefaultConfig(su)
	if cfg.BlockSize > 0 {
		ns.BlockSize = uint64(cfg.BlockSize)
	}
	serverTLS, clientTLS, err := tlsConfigs(cfg.TLS)
	if err != nil {
		return nil, err
	}
	e := &Embedded{cfg: cfg, link: throttle.NewLink(throttle.Config{Read: cfg.Link.Bandwidth, Write: cfg.Link.Bandwidth,
		Latency: cfg.Link.Latency})}
	mcfg := metaserver.Config{DataDir: filepath.Join(cfg.Dir, "meta"), Namespace: ns, Log: cfg.Log,
		TLS: serverTLS, PeerTLS: clientTLS}
	if cfg.Mode == ModeCache {
		mcfg.OpenStore = e.openStore
	}
	if e.srv, err = metaserver.Listen(mcfg, "127.0.0.1:0"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	addr := e.srv.Addr
	if err = e.srv.ReadyWithDefault(ctx, e.bucketURI()); err != nil {
		return nil, fmt.Errorf("databench: %w", err)
	}
	tok, err := e.srv.IssueToken(ctx, su, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("databench: %w", err)
	}
	ccfg := client.Config{Meta: addr, Token: tok, TLS: clientTLS}
	if cfg.Mode == ModeCache {
		if err = e.srv.EnsureNamespace(ctx, &pb.NamespaceInfo{Name: CacheNamespace, Mode: pb.NamespaceMode_NAMESPACE_MODE_CACHE,
			StoreUri: e.bucketURI(), SyncInterval: -1}); err != nil {
			return nil, fmt.Errorf("databench: create the cache-mode namespace: %w", err)
		}
		ccfg.Namespace = CacheNamespace
		if e.bucket, err = e.openStore(ctx, e.bucketURI()); err != nil {
			return nil, err
		}
	}
	if err := e.startWorker(addr, tok); err != nil {
		return nil, err
	}
	if e.c, err = client.New(ccfg); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return e, e.waitWorker(wctx)
}

// bucketURI names the bucket directory, where both namespaces keep their
// objects.
func (e *Embedded) bucketURI() string { return "file://" + filepath.Join(e.cfg.Dir, "bucket") }

// openStore opens the bucket uri names behind the link and then the retry
// layer (so that every attempt pays the link's latency).
func (e *Embedded) openStore(ctx context.Context, uri string) (object.Store, error) {
	st, err := objstore.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	return retry.New(throttle.New(st, e.link), retry.Policy{AttemptTimeout: time.Minute}), nil
}

// startWorker starts the worker, its bucket opened by openStore.
func (e *Embedded) startWorker(meta, tok string) error {
	cfg := e.cfg
	capacity := cfg.CacheBytes
	if capacity == 0 {
		capacity = 10 << 30
	}
	serverTLS, clientTLS, err := tlsConfigs(cfg.TLS)
	if err != nil {
		return err
	}
	wcfg := worker.Config{StateDir: filepath.Join(cfg.Dir, "worker"), Meta: meta, Token: tok, Log: cfg.Log, TLS: serverTLS, MetaTLS: clientTLS,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: filepath.Join(cfg.Dir, "cache"), Capacity: capacity}},
			PageSize: cfg.PageSize, ChunkSize: cfg.ChunkSize, NoSync: cfg.CacheNoSync},
		FetchChunk: cfg.FetchChunk, ReadAhead: cfg.ReadAhead, ReadAheadInFlight: cfg.ReadAheadInFlight,
		FetchConcurrency: cfg.FetchConcurrency, UploadConcurrency: cfg.UploadConcurrency, OpenStore: e.openStore}
	w, err := worker.New(wcfg)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.w, e.cancel, e.served = w, cancel, make(chan struct{})
	go func() {
		defer close(e.served)
		if err := w.Serve(ctx, lis); err != nil {
			cfg.Log.Error("embedded worker stopped", "err", err)
		}
	}()
	return nil
}

// waitWorker returns once the worker is registered with the service.
func (e *Embedded) waitWorker(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		r, err := e.srv.Server.ListWorkers(ctx, &pb.ListWorkersRequest{})
		if err == nil && len(r.Workers) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("databench: the embedded worker did not register: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Client implements Cluster.
func (e *Embedded) Client() *client.Client { return e.c }

// Describe implements Cluster.
func (e *Embedded) Describe() string {
	s := "embedded in this process: a namespace service and one worker (short-circuit socket on this host), data under " + e.cfg.Dir
	if e.cfg.Mode == ModeCache {
		s += "; namespace " + CacheNamespace + " in cache mode (sync interval -1) over the bucket directory bucket/"
	}
	return s
}

// Bucket implements Bucketed: nil unless the cluster is in cache mode.
func (e *Embedded) Bucket() object.Store { return e.bucket }

// Link implements Cluster.
func (e *Embedded) Link() *Link { l := e.cfg.Link; return &l }

// DropCache implements Cluster.
func (e *Embedded) DropCache(context.Context) error {
	e.w.DropCache()
	return nil
}

// CacheDirs implements Cluster.
func (e *Embedded) CacheDirs() []string { return []string{filepath.Join(e.cfg.Dir, "cache")} }

// closeTimeout bounds how long Close waits for the service to stop.
const closeTimeout = 5 * time.Second

// Close stops the worker and the service. It waits at most closeTimeout for
// the service: a member that does not stop must not hang the benchmark's
// exit.
func (e *Embedded) Close() error {
	var errs []error
	if e.c != nil {
		errs = append(errs, e.c.Close())
	}
	if e.w != nil {
		e.cancel()
		<-e.served
		errs = append(errs, e.w.Close())
	}
	done := make(chan error, 1)
	go func() { done <- e.srv.Close() }()
	select {
	case err := <-done:
		errs = append(errs, err)
	case <-time.After(closeTimeout):
		errs = append(errs, fmt.Errorf("databench: the embedded namespace service did not stop within %s", closeTimeout))
	}
	return errors.Join(errs...)
}
