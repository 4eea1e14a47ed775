package worker

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
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
		return err
	}
	ctx := stream.Context()
	policy, err := w.authorizeRef(ctx, ref, blocktoken.Read)
	if err != nil {
		return err
	}
	off, end := int64(r.Offset), int64(r.Offset+r.Length)
	if r.Random {
		if err := w.readRandom(ctx, ref, off, end, stream.Send); err != nil {
			return err
		}
		w.pin(blocks.CacheKey(ref.InodeId, ref.BlockId), policy)
		return nil
	}
	buf := make([]byte, min(chunkSize, end-off))
	for off < end {
		n := min(int64(len(buf)), end-off)
		if err := w.readInto(ctx, ref, buf[:n], off, false); err != nil {
			return err
		}
		if err := stream.Send(&pb.ReadResponse{Data: buf[:n]}); err != nil {
			return err
		}
		w.stats.rpcBytesRead.Add(uint64(n))
		off += n
	}
	w.readAhead(ref, int64(r.Offset), int64(r.Length))
	w.pin(blocks.CacheKey(ref.InodeId, ref.BlockId), policy)
	return nil
}

func checkRange(ref *pb.BlockRef, off, length uint64) error {
	if ref == nil || ref.InodeId == 0 || ref.BlockId == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "read: the request names no block")
	}
	if ref.ObjectKey != "" && (ref.Version == "" || object.ValidateKey(ref.ObjectKey) != nil || object.IsMarker(ref.ObjectKey)) {
		return fserr.Errorf(fserr.ErrInvalidArgument, "read: a range of an object needs a valid key and the object's version")
	}
	if off > ref.Length || length > ref.Length-off {
		return fserr.Errorf(fserr.ErrInvalidArgument, "read: range %d+%d is outside the %d-byte block", off, length, ref.Length)
	}
	return nil
}

// readInto fills p from the block at off, through the cache. A page found
// corrupt is dropped by the cache and fetched again; a page evicted between
// the fetch and the read is fetched again. random fetches only the pages
// of the range (see ensureCached).
func (w *Worker) readInto(ctx context.Context, ref *pb.BlockRef, p []byte, off int64, random bool) error {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	for i := range 3 {
		held, missed, err := w.ensureCached(ctx, ref, off, int64(len(p)), random)
		if i == 0 {
			w.stats.count(missed)
		}
		if err != nil {
			return err
		}
		if len(held) > 0 { // the cache could not store some of it
			return w.readHeld(ctx, ref, key, held, p, off)
		}
		_, err = w.cache.ReadAt(key, p, off)
		if errors.Is(err, cache.ErrCorrupt) {
			w.cfg.Log.Warn("a corrupt page in the cache was dropped; it is fetched again", "err", err)
		}
		if err == nil || !(errors.Is(err, cache.ErrMiss) || errors.Is(err, cache.ErrCorrupt)) {
			return err
		}
	}
	// The cache cannot hold the range (it is smaller than the working set):
	// serve it from the bucket directly.
	return w.fetchInto(ctx, ref, p, off)
}

// ensureCached fetches the pages of [off, off+n) that the cache misses,
// in parallel chunks, each page fetched once however many readers want it:
// pages another call is fetching are waited for, not fetched again. It
// returns the fetches whose bytes the cache could not store (held: their
// data is the caller's to read instead).
//
// NB: the fetches are not canceled with ctx: other readers may be waiting
// for them, and the bytes are worth caching anyway (the retry layer bounds
// each attempt). Only the wait is.
//
// Missing pages are fetched up to the next multiple of FetchChunk from the
// block's start (so that a reader going on finds them fetched, in whole
// chunks); a random reader's (random) only their own range, rounded to the
// cache's fine pages (cache.FillFine): it will not go on, and a columnar
// reader's chunks are a fraction of a page (see fine.go).
//
// A small first read of a block that does not start at its beginning is
// fetched as a random reader's too: a reader's first look at a columnar
// file is at its footer, before its client knows it reads here and there
// (a seek forward, then a read), and a whole fetch chunk would cost a
// Parquet footer of 50 KB up to 4 MiB from the bucket.
func (w *Worker) ensureCached(ctx context.Context, ref *pb.BlockRef, off, n int64, random bool) (held []*inflight, missed bool, err error) {
	exact := random || off > 0 && n < w.cfg.FetchChunk && !w.seq.seen(blocks.CacheKey(ref.InodeId, ref.BlockId))
	held, missed, err = w.ensure(ctx, ref, off, n, w.cfg.FetchChunk, nil, w.fineFor(ref, exact))
	if random && missed && err == nil {
		w.fillWhenIdle(ref)
	}
	return held, missed, err
}

// ensure is ensureCached with the fetches it starts bounded by FetchConcurrency
// GETs at once, or, when ahead is not nil (read-ahead), by the bytes ahead
// lets be outstanding; fine fetches the range rounded to fine pages.
// It reports whether the range missed: some of it had to be fetched, or
// was being fetched.
func (w *Worker) ensure(ctx context.Context, ref *pb.BlockRef, off, n, chunk int64, ahead *byteBudget, fine bool) (held []*inflight, missed bool, err error) {
	wait, mine := w.claimFlights(ctx, ref, off, n, chunk, ahead, fine)
	missed = len(wait)+len(mine) > 0
	for _, f := range append(wait, mine...) {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, missed, ctx.Err()
		}
		if f.err != nil && err == nil {
			err = f.err
		}
		if f.data != nil {
			held = append(held, f)
		}
	}
	return held, missed, err
}

// claimFlights claims the fetches of the missing parts of [off, off+n)
// (see ensure) and starts those that are the caller's (mine); wait are
// the fetches other calls started.
func (w *Worker) claimFlights(ctx context.Context, ref *pb.BlockRef, off, n, chunk int64, ahead *byteBudget, fine bool) (wait, mine []*inflight) {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	missing := func() []cache.Range { return w.cache.Missing(key, off, n) }
	if fine {
		missing = func() []cache.Range { return w.cache.MissingFine(key, off, n) }
	}
	wait, mine = w.fetch.claim(key, missing, chunk, int64(ref.Length), fine)
	fetchCtx := context.WithoutCancel(ctx)
	sem := make(chan struct{}, w.cfg.FetchConcurrency)
	for _, f := range mine {
		var taken int64
		if ahead != nil {
			taken = ahead.take(f.end - f.off)
		} else {
			sem <- struct{}{}
		}
		w.fills.foreground(1)
		go func() {
			defer w.fills.foreground(-1)
			if ahead == nil {
				defer func() { <-sem }()
			}
			w.fetchFlight(fetchCtx, ref, key, f, ahead, taken)
		}()
	}
	return wait, mine
}

// fetchFlight fetches and caches f, which the caller claimed, and
// finishes it as soon as its pages are readable (its waiters need not wait
// for them to be durable too: an fdatasync on a busy disk can take longer
// than the fetch) or once it failed; its bytes can be read as they arrive
// (f.arrived) by readers that stream them. The taken bytes of ahead, if
// not nil, go back as they arrive.
//
// NB: the cache is filled only once the whole range has arrived: a fetch
// that fails midway leaves nothing of it cached.
func (w *Worker) fetchFlight(ctx context.Context, ref *pb.BlockRef, key string, f *inflight, ahead *byteBudget, taken int64) {
	var br *budgetReader
	if ahead != nil {
		br = &budgetReader{b: ahead, left: taken}
		defer br.close()
	}
	var once sync.Once
	finish := func(data []byte, err error) {
		once.Do(func() { f.data = data; w.fetch.finish(key, f, err) })
	}
	data := make([]byte, f.end-f.off)
	f.arrived.start(data)
	wrap := func(r io.Reader) io.Reader {
		if br != nil {
			br.Reader, r = r, br
		}
		return &arrivingReader{Reader: r, a: &f.arrived}
	}
	if err := w.fetchVia(ctx, ref, data, f.off, wrap); err != nil {
		// NB: out of the group first, so that a reader told of the
		// failure and asking again starts a new fetch, not this one.
		finish(nil, err)
		f.arrived.fail(err)
		w.cfg.Log.Debug("fetch failed", "key", key, "off", f.off, "err", err)
		return
	}
	put := w.cache.PutReadable
	if f.fine {
		put = w.cache.FillFine
	}
	if err := put(key, f.off, data, func() { finish(nil, nil) }); err != nil {
		// Not cached (or cached but not made durable, if the pages were
		// readable already: then finish is done). The readers get the
		// bytes all the same. A fine fill into a block that another
		// reader cached in whole pages meanwhile is no failure.
		if !(f.fine && errors.Is(err, cache.ErrInvalidRange)) {
			w.cacheFailed(key, err)
		}
		finish(data, nil)
	}
	finish(nil, nil)
}

// fetchInto reads p from the block's object at off.
func (w *Worker) fetchInto(ctx context.Context, ref *pb.BlockRef, p []byte, off int64) error {
	return w.fetchVia(ctx, ref, p, off, nil)
}

// fetchVia is fetchInto reading the object's body through wrap, if not nil.
func (w *Worker) fetchVia(ctx context.Context, ref *pb.BlockRef, p []byte, off int64, wrap func(io.Reader) io.Reader) error {
	store, err := w.stores.Get(ctx, ref.StoreUri)
	if err != nil {
		return err
	}
	rc, key, err := openBlock(ctx, store, ref, off, int64(len(p)))
	if err != nil {
		return bucketErr(err)
	}
	defer rc.Close()
	var r io.Reader = rc
	if wrap != nil {
		r = wrap(rc)
	}
	n, err := io.ReadFull(r, p)
	w.stats.bucketBytesRead.Add(uint64(n))
	if err != nil {
		return bucketErr(changed(ref, key, off, err))
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
	length := readAheadEnd(start, w.cfg.ReadAhead, w.cfg.FetchChunk, int64(ref.Length)) - start
	w.stats.readAheads.Add(1)
	go func() {
		if _, _, err := w.ensure(context.Background(), ref, start, length, w.cfg.FetchChunk, w.ahead, false); err != nil {
			w.cfg.Log.Debug("read-ahead failed", "key", key, "err", err)
		}
	}()
}

// readAheadEnd is where a read-ahead of ahead bytes from start ends: at
// the last multiple of chunk within it (all of it if there is none), or at
// the block's length. Fetches are cut on the same grid (fetchGroup.claim),
// so a read-ahead's last GET is a whole chunk, not a sliver that pays a
// request's latency for little and leaves the next one out of line.
//
// NB: cut back, not rounded up, so that ReadAhead stays the most a reader
// has fetched ahead, as configured.
func readAheadEnd(start, ahead, chunk, length int64) int64 {
	end := (start + ahead) / chunk * chunk
	if end <= start {
		end = start + ahead
	}
	return min(end, length)
}

// fetchGroup tracks the ranges of each block being fetched, so that a
// page is fetched once however many readers (and read-aheads) want it.
type fetchGroup struct {
	mu struct {
		sync.Mutex
		blocks map[string][]*inflight
	}
}

// inflight is a range being fetched; done closes when it is cached (or
// failed with err, or fetched but not cached: then data holds its bytes).
// Its bytes can be read as they arrive from arrived. fine is a fetch to
// cache in fine pages (cache.FillFine).
type inflight struct {
	off, end int64
	fine     bool
	done     chan struct{}
	err      error
	data     []byte
	arrived  arrival
}

// claim asks missing (under the group's lock, so that no fetch can finish
// unseen meanwhile) what the cache lacks, and splits it into the ranges in
// flight already, to wait for, and new ranges of at most chunk bytes (cut
// at the block's length), registered as the caller's to fetch and finish.
//
// NB: new ranges are cut at multiples of chunk from the block's start, not
// chunk bytes from where a miss begins: the cache writes each fetched range
// in one call, and the page cache keeps the file in folios no larger than
// that write and aligned as it; a short-circuit reader maps 2 MiB folios
// by one page-table entry each, and 1 MiB ones by 4 KiB entries, for a
// quarter more CPU per byte (docs/benchmarks.md).
func (g *fetchGroup) claim(key string, missing func() []cache.Range, chunk, length int64, fine bool) (wait, mine []*inflight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mu.blocks == nil {
		g.mu.blocks = map[string][]*inflight{}
	}
	flying := g.mu.blocks[key]
	for _, m := range missing() {
		p, end := m.Off, min(m.Off+m.Len, length)
		for p < end {
			next := end // where the next flight starts, or end
			var cover *inflight
			for _, f := range flying {
				if f.off <= p && p < f.end {
					cover = f
					break
				}
				if f.off > p && f.off < next {
					next = f.off
				}
			}
			if cover != nil {
				if !slices.Contains(wait, cover) {
					wait = append(wait, cover)
				}
				p = cover.end
				continue
			}
			for p < next {
				f := &inflight{off: p, end: min(p-p%chunk+chunk, next), fine: fine, done: make(chan struct{})}
				mine = append(mine, f)
				p = f.end
			}
		}
	}
	g.mu.blocks[key] = append(flying, mine...)
	return wait, mine
}

// finish ends a fetch the caller claimed.
func (g *fetchGroup) finish(key string, f *inflight, err error) {
	g.mu.Lock()
	f.err = err
	list := slices.DeleteFunc(g.mu.blocks[key], func(x *inflight) bool { return x == f })
	if len(list) == 0 {
		delete(g.mu.blocks, key)
	} else {
		g.mu.blocks[key] = list
	}
	g.mu.Unlock()
	close(f.done)
}

// sequentialTracker remembers where the last read of each block ended, to
// tell a sequential reader (who deserves read-ahead) from a random one.
type sequentialTracker struct {
	mu struct {
		sync.Mutex
		ends map[string]int64
	}
}

// seen reports whether a read of key was recorded.
func (t *sequentialTracker) seen(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.mu.ends[key]
	return ok
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
	// NB: a short-circuit reader reads what it was lent on its own, so
	// its next request may overlap the end of the last one's grant.
	return ok && off <= prev && prev < end || off == 0 && end-off >= chunkSize
}
