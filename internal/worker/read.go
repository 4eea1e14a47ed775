package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// chunkSize is the size of one Read response message.
const chunkSize = 1 << 20

// Read implements WorkerService: it makes the range cached (fetching what is
// missing from the bucket), then streams it from the cache.
func (w *Worker) Read(r *pb.ReadRequest, stream pb.WorkerService_ReadServer) error {
	ref := r.GetBlock()
	if err := checkRange(ref, r.Offset, r.Length); err != nil {
		return fserr.ToStatus(err)
	}
	ctx := stream.Context()
	off, end := int64(r.Offset), int64(r.Offset+r.Length)
	buf := make([]byte, min(chunkSize, end-off))
	for off < end {
		n := min(int64(len(buf)), end-off)
		if err := w.readInto(ctx, ref, buf[:n], off); err != nil {
			return fserr.ToStatus(err)
		}
		if err := stream.Send(&pb.ReadResponse{Data: buf[:n]}); err != nil {
			return err
		}
		w.stats.rpcBytesRead.Add(uint64(n))
		off += n
	}
	w.readAhead(ref, int64(r.Offset), int64(r.Length))
	return nil
}

func checkRange(ref *pb.BlockRef, off, length uint64) error {
	if ref == nil || ref.StoreUri == "" || ref.InodeId == 0 || ref.BlockId == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "read: the request names no block")
	}
	if off > ref.Length || length > ref.Length-off {
		return fserr.Errorf(fserr.ErrInvalidArgument, "read: range %d+%d is outside the %d-byte block", off, length, ref.Length)
	}
	return nil
}

// readInto fills p from the block at off, through the cache. A page found
// corrupt is dropped by the cache and fetched again; a page evicted between
// the fetch and the read is fetched again.
func (w *Worker) readInto(ctx context.Context, ref *pb.BlockRef, p []byte, off int64) error {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	var err error
	for range 3 {
		if err = w.ensureCached(ctx, ref, off, int64(len(p))); err != nil {
			return err
		}
		_, err = w.cache.ReadAt(key, p, off)
		if err == nil || !(errors.Is(err, cache.ErrMiss) || errors.Is(err, cache.ErrCorrupt)) {
			return err
		}
	}
	// The cache cannot hold the range (it is smaller than the working set):
	// serve it from the bucket directly.
	return w.fetchInto(ctx, ref, p, off)
}

// ensureCached fetches the pages of [off, off+n) that the cache misses,
// in parallel chunks, each chunk fetched once however many readers want it.
func (w *Worker) ensureCached(ctx context.Context, ref *pb.BlockRef, off, n int64) error {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	missing := w.cache.Missing(key, off, n)
	if len(missing) == 0 {
		return nil
	}
	var chunks []cache.Range
	for _, m := range missing {
		for o := m.Off; o < m.Off+m.Len; o += w.cfg.FetchChunk {
			l := min(w.cfg.FetchChunk, m.Off+m.Len-o, int64(ref.Length)-o)
			if l > 0 {
				chunks = append(chunks, cache.Range{Off: o, Len: l})
			}
		}
	}
	errs := make(chan error, len(chunks))
	sem := make(chan struct{}, w.cfg.FetchConcurrency)
	for _, c := range chunks {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- w.fetch.do(fmt.Sprintf("%s@%d", key, c.Off), func() error { return w.fetchChunk(ctx, ref, c) })
		}()
	}
	var first error
	for range chunks {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// fetchChunk GETs one range of the block and caches it.
func (w *Worker) fetchChunk(ctx context.Context, ref *pb.BlockRef, c cache.Range) error {
	data := make([]byte, c.Len)
	if err := w.fetchInto(ctx, ref, data, c.Off); err != nil {
		return err
	}
	return w.cache.Put(blocks.CacheKey(ref.InodeId, ref.BlockId), c.Off, data)
}

// fetchInto reads p from the block's object at off.
func (w *Worker) fetchInto(ctx context.Context, ref *pb.BlockRef, p []byte, off int64) error {
	store, err := w.stores.Get(ctx, ref.StoreUri)
	if err != nil {
		return err
	}
	key := blocks.ObjectKey(ref.InodeId, ref.BlockId)
	rc, err := store.Get(ctx, key, off, int64(len(p)))
	if err != nil {
		if errors.Is(err, object.ErrNotFound) {
			return fserr.Errorf(fserr.ErrNotFound, "read: block %s is missing from the bucket", key)
		}
		return err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, p)
	w.stats.bucketBytesRead.Add(uint64(n))
	if err != nil {
		return fmt.Errorf("read %s at %d: %w", key, off, err)
	}
	return nil
}

// readAhead fetches, in the background, what a sequential reader of the
// block will want next.
func (w *Worker) readAhead(ref *pb.BlockRef, off, n int64) {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	if !w.seq.advance(key, off, off+n) || off+n >= int64(ref.Length) {
		return
	}
	start := off + n
	length := min(w.cfg.ReadAhead, int64(ref.Length)-start)
	go func() {
		if err := w.ensureCached(context.Background(), ref, start, length); err != nil {
			w.cfg.Log.Debug("read-ahead failed", "key", key, "err", err)
		}
	}()
}

// fetchGroup runs one fetch per key at a time; callers of the same key wait
// for the one in flight and share its result.
type fetchGroup struct {
	mu struct {
		sync.Mutex
		calls map[string]*fetchCall
	}
}

type fetchCall struct {
	done chan struct{}
	err  error
}

func (g *fetchGroup) do(key string, fn func() error) error {
	g.mu.Lock()
	if c, ok := g.mu.calls[key]; ok {
		g.mu.Unlock()
		<-c.done
		return c.err
	}
	if g.mu.calls == nil {
		g.mu.calls = map[string]*fetchCall{}
	}
	c := &fetchCall{done: make(chan struct{})}
	g.mu.calls[key] = c
	g.mu.Unlock()
	c.err = fn()
	g.mu.Lock()
	delete(g.mu.calls, key)
	g.mu.Unlock()
	close(c.done)
	return c.err
}

// sequentialTracker remembers where the last read of each block ended, to
// tell a sequential reader (who deserves read-ahead) from a random one.
type sequentialTracker struct {
	mu struct {
		sync.Mutex
		ends map[string]int64
	}
}

// advance records a read of [off, end) and reports whether it continued the
// previous one.
func (t *sequentialTracker) advance(key string, off, end int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.ends == nil || len(t.mu.ends) > 4096 {
		t.mu.ends = map[string]int64{}
	}
	prev, ok := t.mu.ends[key]
	t.mu.ends[key] = end
	return ok && prev == off || off == 0 && end-off >= chunkSize
}
