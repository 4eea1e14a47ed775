package metaserver

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// prepare does the bucket side of op for req when req's namespace is in
// cache mode (internal/cachemode), and returns the request to carry out,
// the context to carry it out with (a read's has passed the read barrier
// that the preparation's views and the read itself then share), and what
// to call once it is carried out (cachemode.Mode.Prepare's release).
func (s *Server) prepare(ctx context.Context, op *statemachine.Op, req request) (request, context.Context, func(), error) {
	rec := s.cacheNamespace(req.GetHeader().GetNamespace())
	if rec == nil {
		return req, ctx, func() {}, nil
	}
	if op.Kind == statemachine.Read && !passedBarrier(ctx) {
		if err := s.node.ReadBarrier(ctx); err != nil {
			return nil, ctx, nil, s.raftError(err)
		}
		ctx = context.WithValue(ctx, barrierKey{}, true)
	}
	out, release, err := s.cache.Prepare(ctx, rec, op, req)
	if err != nil {
		return nil, ctx, nil, err
	}
	return out.(request), ctx, release, nil
}

// prepareBatchConcurrency bounds the calls of one batch whose bucket
// sides are done at once.
const prepareBatchConcurrency = 32

// prepareBatch prepares the calls of a batch that have no result yet,
// those of cache-mode namespaces together: each may wait on the bucket.
// Each prepared call's release is to be called once it is answered and
// its proposal, if any, settled (releaseWhenSettled).
func (s *Server) prepareBatch(ctx context.Context, calls []batched, results []*pb.BatchResult) {
	sem := make(chan struct{}, prepareBatchConcurrency)
	var wg sync.WaitGroup
	for i := range calls {
		b := &calls[i]
		if results[i] != nil || s.cacheNamespace(b.req.GetHeader().GetNamespace()) == nil {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			req, _, release, err := s.prepare(ctx, b.op, b.req)
			if err != nil {
				results[i] = failed(err)
				return
			}
			b.req, b.release = req, release
		}()
	}
	wg.Wait()
}

// cacheNamespace returns the record of namespace name if it is in cache
// mode, else nil (a missing namespace is left for the operation to report).
// It costs a map lookup: every call of every namespace asks.
func (s *Server) cacheNamespace(name string) *kvschema.Namespace {
	name = namespaceName(name)
	m := s.cacheNS.Load()
	if m == nil {
		m = s.loadCacheNamespaces()
	}
	return (*m)[name]
}

func (s *Server) loadCacheNamespaces() *map[string]*kvschema.Namespace {
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	if m := s.cacheNS.Load(); m != nil {
		return m
	}
	var list []*kvschema.Namespace
	m := map[string]*kvschema.Namespace{}
	if err := s.store.View(func(r kv.Reader) (err error) {
		list, err = namespace.Namespaces(r)
		return err
	}); err != nil {
		return &m // not kept: asked again next time
	}
	for _, ns := range list {
		if ns.IsCache() {
			m[ns.Name] = ns
		}
	}
	s.cacheNS.Store(&m)
	return &m
}

// namespacesChanged drops what cacheNamespace knows, after commands that
// created or deleted namespaces were committed (or a snapshot replaced the
// state).
func (s *Server) namespacesChanged() {
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	s.cacheNS.Store(nil)
}

// cacheService is the Server as cache mode sees it.
type cacheService struct{ s *Server }

func (c cacheService) View(ctx context.Context, fn func(kv.Reader) error) error {
	return c.s.view(ctx, fn)
}

func (c cacheService) Propose(ctx context.Context, cmd *pb.Command) (statemachine.Result, error) {
	return c.s.propose(ctx, cmd)
}

// Try applies cmd to an overlay of the applied state that is thrown away.
func (c cacheService) Try(ctx context.Context, cmd *pb.Command) (statemachine.Result, error) {
	cmd = proto.Clone(cmd).(*pb.Command)
	cmd.Now, cmd.Settings = c.s.cfg.Clock().UnixMilli(), c.s.machine.Settings()
	var res statemachine.Result
	err := c.s.view(ctx, func(r kv.Reader) error {
		rs, err := c.s.machine.Apply(kv.NewOverlay(r), cmd)
		if err == nil {
			res, err = rs[0], rs[0].Err
		}
		return err
	})
	return res, err
}

func (c cacheService) Bucket(ctx context.Context, uri string) (object.Store, error) {
	return c.s.stores.Get(ctx, uri)
}

func (c cacheService) Now() time.Time { return c.s.cfg.Clock() }

// SweepUploads aborts the abandoned multipart uploads of every cache-mode
// namespace's bucket (cachemode.UploadAge), as the leader.
func (s *Server) SweepUploads(ctx context.Context) error {
	if !s.isLeader() {
		return nil
	}
	var list []*kvschema.Namespace
	if err := s.store.View(func(r kv.Reader) (err error) {
		list, err = namespace.Namespaces(r)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, ns := range list {
		if !ns.IsCache() {
			continue
		}
		n, err := s.cache.SweepUploads(ctx, ns, "")
		if n > 0 {
			s.cfg.Log.Info("cache mode: aborted abandoned uploads", "namespace", ns.Name, "uploads", n)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// GetProgress implements MetaService: the bucket side of an operation on a
// cache-mode path, as far as it got, from the leader's memory.
func (s *Server) GetProgress(ctx context.Context, r *pb.GetProgressRequest) (*pb.GetProgressResponse, error) {
	if err := s.checkCaller(ctx, r.GetHeader()); err != nil {
		return nil, err
	}
	if !s.isLeader() {
		return nil, s.notLeader()
	}
	return s.cache.Progress(namespaceName(r.GetHeader().GetNamespace()), r.GetPath()), nil
}

func namespaceName(ns string) string {
	if ns == "" {
		return namespace.DefaultNamespace
	}
	return ns
}
