package worker

import (
	"context"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/cache"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Idle fill: a block a random reader read cold (fine.go) is likely read
// again, other columns of the same Parquet file by the next query. The
// worker fetches the rest of it in the background, but only while the link
// is idle: a piece (Config.IdleFillPiece) at a time, each started only
// when no fetch a reader waits for is in flight, so that a read that comes
// meanwhile waits at most for the piece under way, never for the rest of
// the block. What a reader asks for is never delayed behind a queue of
// fills, and a fill never takes the bytes of a waiting read.

// maxIdleFills bounds the blocks queued for idle fill; more are not queued
// (a client reading scattered ranges of many blocks would otherwise grow
// the queue without bound).
const maxIdleFills = 1024

// idleFill is the worker's queue of blocks to fill while idle, and its
// count of the fetches readers wait for (busy).
type idleFill struct {
	piece int64 // bytes per background fetch; <= 0: no idle fill
	mu    struct {
		sync.Mutex
		busy    int           // foreground fetches in flight
		idle    chan struct{} // closed when busy drops to 0; nil: no one waits
		queue   []*pb.BlockRef
		queued  map[string]bool
		running bool // a fill loop runs
		closed  bool
	}
	done chan struct{} // closed by close
}

func newIdleFill(piece int64) *idleFill {
	f := &idleFill{piece: piece, done: make(chan struct{})}
	f.mu.queued = map[string]bool{}
	return f
}

// foreground counts a fetch a reader waits for in (delta 1) or out (-1).
func (f *idleFill) foreground(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.busy += delta
	if f.mu.busy == 0 && f.mu.idle != nil {
		close(f.mu.idle)
		f.mu.idle = nil
	}
}

// waitIdle waits until no foreground fetch is in flight; false if the
// worker closed.
func (f *idleFill) waitIdle() bool {
	for {
		f.mu.Lock()
		if f.mu.closed {
			f.mu.Unlock()
			return false
		}
		if f.mu.busy == 0 {
			f.mu.Unlock()
			return true
		}
		if f.mu.idle == nil {
			f.mu.idle = make(chan struct{})
		}
		idle := f.mu.idle
		f.mu.Unlock()
		select {
		case <-idle:
		case <-f.done:
		}
	}
}

// add queues ref's block and reports whether a fill loop must start.
func (f *idleFill) add(ref *pb.BlockRef) (start bool) {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.piece <= 0 || f.mu.closed || f.mu.queued[key] || len(f.mu.queue) >= maxIdleFills {
		return false
	}
	f.mu.queued[key] = true
	f.mu.queue = append(f.mu.queue, ref)
	start = !f.mu.running
	f.mu.running = true
	return start
}

// pop takes the next block to fill; false (and the loop ends) if none.
func (f *idleFill) pop() (*pb.BlockRef, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.mu.queue) == 0 || f.mu.closed {
		f.mu.running = false
		return nil, false
	}
	ref := f.mu.queue[0]
	f.mu.queue = f.mu.queue[1:]
	delete(f.mu.queued, blocks.CacheKey(ref.InodeId, ref.BlockId))
	return ref, true
}

func (f *idleFill) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.mu.closed {
		f.mu.closed = true
		close(f.done)
	}
}

// fillWhenIdle queues ref's block, which a random reader just read cold,
// for idle fill.
func (w *Worker) fillWhenIdle(ref *pb.BlockRef) {
	if w.fills.add(ref) {
		go w.fillLoop()
	}
}

func (w *Worker) fillLoop() {
	for {
		ref, ok := w.fills.pop()
		if !ok {
			return
		}
		w.fillBlock(ref)
	}
}

// fillBlock fetches what the cache misses of ref's block, a piece at a
// time while the worker is idle, until it is all cached, a fetch fails or
// the cache cannot keep what was fetched.
func (w *Worker) fillBlock(ref *pb.BlockRef) {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	length, piece := int64(ref.Length), w.fills.piece
	// NB: what is fetched is bounded by the block's length: pages the
	// cache evicts as fast as they come are not fetched again and again.
	for fetched := int64(0); fetched < length && w.fills.waitIdle(); {
		missing := w.cache.Missing(key, 0, length)
		if len(missing) == 0 || missing[0].Off >= length {
			return
		}
		m := cache.Range{Off: missing[0].Off, Len: min(missing[0].Len, piece, length-missing[0].Off)}
		fetched += m.Len
		wait, mine := w.fetch.claim(key, func() []cache.Range { return []cache.Range{m} }, piece, length, true)
		for _, f := range mine {
			w.fetchFlight(context.Background(), ref, key, f, nil, 0)
		}
		for _, f := range append(wait, mine...) {
			<-f.done
			if f.err != nil || f.data != nil {
				w.cfg.Log.Debug("idle fill stopped", "key", key, "err", f.err)
				return
			}
		}
	}
}
