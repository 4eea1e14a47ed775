package databench

import (
	"context"
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
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/object/throttle"
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
	// granularity.
	CacheBytes, PageSize int64
	// CacheNoSync skips the cache's fdatasync before it records pages
	// (cache.Config.NoSync).
	CacheNoSync bool
	// BlockSize is the namespace's default block size (default 64 MiB).
	BlockSize int64
	// Worker tuning, passed to worker.Config as they are (zero: the
	// worker's defaults).
	FetchChunk, ReadAhead               int64
	FetchConcurrency, UploadConcurrency int
	// Log receives the services' logs; nil discards them.
	Log *slog.Logger
}

// Embedded is a namespace service and one worker in this process, served
// over loopback gRPC, with the worker's short-circuit socket on the same
// host as the benchmark's client. The worker's bucket is a local directory
// behind a throttle.Link: the cold phases read through it.
type Embedded struct {
	cfg    EmbeddedConfig
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
	ns := namespace.DefaultConfig(su)
	if cfg.BlockSize > 0 {
		ns.BlockSize = uint64(cfg.BlockSize)
	}
	srv, err := metaserver.Listen(metaserver.Config{DataDir: filepath.Join(cfg.Dir, "meta"), Namespace: ns, Log: cfg.Log},
		"127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &Embedded{cfg: cfg, srv: srv}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	addr := srv.Addr
	if err = srv.ReadyWithDefault(ctx, "file://"+filepath.Join(cfg.Dir, "bucket")); err != nil {
		return nil, fmt.Errorf("databench: %w", err)
	}
	tok, err := srv.IssueToken(ctx, su, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("databench: %w", err)
	}
	if err := e.startWorker(addr, tok); err != nil {
		return nil, err
	}
	if e.c, err = client.New(client.Config{Meta: addr, Token: tok}); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return e, e.waitWorker(wctx)
}

// startWorker starts the worker, its bucket behind the link and then the
// retry layer (so that every attempt pays the link's latency).
func (e *Embedded) startWorker(meta, tok string) error {
	cfg := e.cfg
	link := throttle.NewLink(throttle.Config{Read: cfg.Link.Bandwidth, Write: cfg.Link.Bandwidth, Latency: cfg.Link.Latency})
	capacity := cfg.CacheBytes
	if capacity == 0 {
		capacity = 10 << 30
	}
	wcfg := worker.Config{StateDir: filepath.Join(cfg.Dir, "worker"), Meta: meta, Token: tok, Log: cfg.Log,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: filepath.Join(cfg.Dir, "cache"), Capacity: capacity}},
			PageSize: cfg.PageSize, NoSync: cfg.CacheNoSync},
		FetchChunk: cfg.FetchChunk, ReadAhead: cfg.ReadAhead,
		FetchConcurrency: cfg.FetchConcurrency, UploadConcurrency: cfg.UploadConcurrency,
		OpenStore: func(ctx context.Context, uri string) (object.Store, error) {
			st, err := objstore.Open(ctx, uri)
			if err != nil {
				return nil, err
			}
			return retry.New(throttle.New(st, link), retry.Policy{AttemptTimeout: time.Minute}), nil
		}}
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
		r, err := e.srv.ListWorkers(ctx, &pb.ListWorkersRequest{})
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
	return "embedded in this process: a namespace service and one worker (short-circuit socket on this host), data under " + e.cfg.Dir
}

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
