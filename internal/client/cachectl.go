package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Cache control: what `strata admin load`, `uncache` and the cached
// columns of `strata fs -count` ask of the workers, a file at a time. Each
// block is handled by its home worker (the one readers go to), so that a
// load warms the cache readers use. Loads and uncaches are a superuser's:
// the file is opened for them with cache_admin, whose block token (mode
// cache) the workers ask for.

// CacheReport is what the workers hold of a file, or did for it.
type CacheReport struct {
	Bytes   uint64 // the file's length
	Cached  uint64 // bytes cached (before a load: what it found cached)
	Fetched uint64 // bytes a load fetched from the bucket
	Dropped uint64 // blocks an uncache dropped
}

// LoadFile brings the blocks of file path into their home workers'
// caches; what is cached already costs nothing, so running it again after
// it stopped resumes it.
func (c *Client) LoadFile(ctx context.Context, path string) (CacheReport, error) {
	return c.eachHome(ctx, path, true, func(ctx context.Context, wc pb.WorkerServiceClient, refs []*pb.BlockRef, rep *CacheReport) error {
		r, err := wc.Load(ctx, &pb.LoadRequest{Blocks: refs})
		if err == nil {
			rep.Cached, rep.Fetched = rep.Cached+r.Cached, rep.Fetched+r.Fetched
		}
		return err
	})
}

// UncacheFile drops the blocks of file path from every live worker's
// cache (a block may be cached away from its home, by a fallback read).
func (c *Client) UncacheFile(ctx context.Context, path string) (CacheReport, error) {
	rd, err := c.openPath(ctx, path, true)
	if err != nil {
		return CacheReport{}, err
	}
	rep := CacheReport{Bytes: uint64(rd.size)}
	refs := rd.blockRefs()
	if len(refs) == 0 {
		return rep, nil
	}
	list, err := c.workers.live(ctx, false)
	if err != nil {
		return rep, err
	}
	for _, w := range list {
		wc, err := c.workers.conn(w)
		if err != nil {
			return rep, err
		}
		r, err := wc.Uncache(ctx, &pb.UncacheRequest{Blocks: refs})
		if err != nil {
			return rep, fmt.Errorf("worker %s: %w", w.Id, rpcerr.FromStatus(err))
		}
		rep.Dropped += r.Dropped
	}
	return rep, nil
}

// CachedFile reports how much of file path its home workers hold.
func (c *Client) CachedFile(ctx context.Context, path string) (CacheReport, error) {
	return c.eachHome(ctx, path, false, func(ctx context.Context, wc pb.WorkerServiceClient, refs []*pb.BlockRef, rep *CacheReport) error {
		r, err := wc.Cached(ctx, &pb.CachedRequest{Blocks: refs})
		for _, n := range r.GetBytes() {
			rep.Cached += n
		}
		return err
	})
}

// eachHome calls fn once per home worker of file path's blocks, with those
// blocks, the file opened as openPath does (for cacheAdmin if admin).
func (c *Client) eachHome(ctx context.Context, path string, admin bool,
	fn func(context.Context, pb.WorkerServiceClient, []*pb.BlockRef, *CacheReport) error) (CacheReport, error) {
	rd, err := c.openPath(ctx, path, admin)
	if err != nil {
		return CacheReport{}, err
	}
	rep := CacheReport{Bytes: uint64(rd.size)}
	if rd.inline != nil || rd.size == 0 {
		rep.Cached = rep.Bytes // held by the namespace itself
		return rep, nil
	}
	list, err := c.workers.live(ctx, false)
	if err != nil {
		return rep, err
	}
	byHome := map[*pb.WorkerInfo][]*pb.BlockRef{}
	for _, ref := range rd.blockRefs() {
		home := rank(list, ref.InodeId, ref.BlockId)[0]
		byHome[home] = append(byHome[home], ref)
	}
	var errs []error
	for w, refs := range byHome {
		wc, err := c.workers.conn(w)
		if err == nil {
			err = rpcerr.FromStatus(fn(ctx, wc, refs, &rep))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("worker %s: %w", w.Id, err))
		}
	}
	return rep, errors.Join(errs...)
}

// blockRefs names every block of the file for the workers.
func (r *Reader) blockRefs() []*pb.BlockRef {
	refs := make([]*pb.BlockRef, len(r.blocks))
	for i, b := range r.blocks {
		refs[i] = r.blockRef(b)
	}
	return refs
}

// Resync makes a cache-mode namespace check path, and everything below it,
// against its bucket again on the next access to each; it reports how many
// entries the namespace held there.
func (c *Client) Resync(ctx context.Context, path string) (uint64, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return 0, err
	}
	r, err := call(func() (*pb.ResyncResponse, error) {
		return c.meta.Resync(ctx, &pb.ResyncRequest{Header: c.hdr(ns), Path: p})
	})
	if err != nil {
		return 0, err
	}
	return r.Entries, nil
}

// Progress reports how far the bucket side of an operation on path (a
// rename or delete of a cache-mode directory) has got; Running is false
// when none is under way.
func (c *Client) Progress(ctx context.Context, path string) (*pb.GetProgressResponse, error) {
	ns, p, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	return call(func() (*pb.GetProgressResponse, error) {
		return c.meta.GetProgress(ctx, &pb.GetProgressRequest{Header: c.hdr(ns), Path: p})
	})
}
