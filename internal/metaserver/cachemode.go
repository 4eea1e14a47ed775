package metaserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/cachemode"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/object"
	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// prepare does the bucket side of op for req when req's namespace is in
// cache mode (internal/cachemode), and returns the request to carry out,
// the context to carry it out with (a read's has passed the read barrier
// that the preparation's views and the read itself then share), and what
// to call once it is carried out (cachemode.Mode.Prepare's release).
func (m *Member) prepare(ctx context.Context, op *sm.Op, st steps, req sm.Request) (sm.Request, context.Context, func(), error) {
	rec := m.cache.lookup(req.GetHeader().GetNamespace())
	if rec == nil || st.prepare == cachemode.NoBucketSide {
		return req, ctx, func() {}, nil
	}
	if op.Kind == sm.Read {
		var err error
		if ctx, err = m.core.barrier(ctx); err != nil {
			return nil, ctx, nil, err
		}
	}
	out, release, err := m.cache.mode.Prepare(ctx, rec, st.prepare, req)
	if err != nil {
		return nil, ctx, nil, err
	}
	return out.(sm.Request), ctx, release, nil
}

// cacheNamespaces holds the cache-mode glue of a member: its Mode, and the
// records of the cache-mode namespaces, read from the state when first
// needed and dropped when commands create or delete namespaces; mu
// serialises the two.
type cacheNamespaces struct {
	core    *replica
	log     *slog.Logger
	mode    *cachemode.Mode
	records atomic.Pointer[map[string]*kvschema.Namespace]
	mu      sync.Mutex
}

// lookup returns the record of namespace name if it is in cache
// mode, else nil (a missing namespace is left for the operation to report).
// It costs a map lookup: every call of every namespace asks.
func (c *cacheNamespaces) lookup(name string) *kvschema.Namespace {
	if name == "" {
		name = sm.DefaultNamespace
	}
	recs := c.records.Load()
	if recs == nil {
		recs = c.load()
	}
	return (*recs)[name]
}

func (c *cacheNamespaces) load() *map[string]*kvschema.Namespace {
	c.mu.Lock()
	defer c.mu.Unlock()
	if recs := c.records.Load(); recs != nil {
		return recs
	}
	var list []*kvschema.Namespace
	recs := map[string]*kvschema.Namespace{}
	if err := c.core.Applied(func(r kv.Reader) (err error) {
		list, err = sm.Namespaces(r)
		return err
	}); err != nil {
		return &recs // not kept: asked again next time
	}
	for _, ns := range list {
		if ns.IsCache() {
			recs[ns.Name] = ns
		}
	}
	c.records.Store(&recs)
	return &recs
}

// changed drops what cacheNamespace knows, after commands that created or
// deleted namespaces were committed (or a snapshot replaced the state).
func (c *cacheNamespaces) changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records.Store(nil)
}

// cacheService is the member as cache mode sees it.
type cacheService struct{ m *Member }

func (c cacheService) View(ctx context.Context, fn func(kv.Reader) error) error {
	return c.m.core.View(ctx, fn)
}

func (c cacheService) Propose(ctx context.Context, cmd *pb.Command) (sm.Result, error) {
	return c.m.core.Propose(ctx, cmd)
}

func (c cacheService) Try(ctx context.Context, cmd *pb.Command) (sm.Result, error) {
	return c.m.core.Try(ctx, cmd)
}

func (c cacheService) Bucket(ctx context.Context, uri string) (object.Store, error) {
	return c.m.stores.Get(ctx, uri)
}

func (c cacheService) Now() time.Time { return c.m.core.Now() }

// sweepUploads aborts the abandoned multipart uploads of every cache-mode
// namespace's bucket (cachemode.UploadAge), as the leader.
func (c *cacheNamespaces) sweepUploads(ctx context.Context) error {
	if !c.core.IsLeader() {
		return nil
	}
	var list []*kvschema.Namespace
	if err := c.core.Applied(func(r kv.Reader) (err error) {
		list, err = sm.Namespaces(r)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, ns := range list {
		if !ns.IsCache() {
			continue
		}
		n, err := c.mode.SweepUploads(ctx, ns, "")
		if n > 0 {
			c.log.Info("cache mode: aborted abandoned uploads", "namespace", ns.Name, "uploads", n)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// progress answers GetProgress: the bucket side of an operation on a
// cache-mode path, as far as it got, from the leader's memory.
func (m *Member) progress(ctx context.Context, r *pb.GetProgressRequest) (*pb.GetProgressResponse, error) {
	if err := m.tokens.CheckCaller(ctx, r.GetHeader()); err != nil {
		return nil, err
	}
	if !m.core.IsLeader() {
		return nil, m.core.NotLeader()
	}
	ns := r.GetHeader().GetNamespace()
	if ns == "" {
		ns = sm.DefaultNamespace
	}
	return m.cache.mode.Progress(ns, r.GetPath()), nil
}

// namespaceRecord returns the record of the caller's namespace (nil if it
// vanished meanwhile).
func (m *Member) namespaceRecord(h *pb.Header) *kvschema.Namespace {
	var rec *kvschema.Namespace
	_ = m.core.Applied(func(r kv.Reader) (err error) {
		rec, err = sm.NamespaceRecord(r, h.GetNamespace())
		return err
	})
	return rec
}
