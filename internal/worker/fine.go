package worker

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/cache"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A random reader (a client's read policy: random, columnar, a positioned
// read; see docs/datapath.md, "Reading") asks for scattered ranges, a
// Parquet reader for column chunks of a fraction of a page. Cold, the
// worker fetches exactly the range, rounded to the cache's fine pages
// (cache.FillFine, 64 KiB), not the whole pages around it, which cost a
// columnar read up to three times its bytes from the bucket (issue 42);
// and it sends the bytes to the reader as they arrive from the bucket
// (arrival), while it fills the cache, so that a cold read waits no longer
// for its first byte than a GET of its own would. Concurrent readers of
// the same missing range share its fetch (fetchGroup), and stream it too.

// fineFor reports whether the fetches of a reader of ref go in fine pages:
// a random reader's, unless the block is too large to index in fine pages.
func (w *Worker) fineFor(ref *pb.BlockRef, random bool) bool {
	return random && int64(ref.Length) <= cache.MaxPages*w.cache.FinePageSize()
}

// readRandom sends [off, end) of the block to a random reader by send:
// what the cache holds from the cache, and what it misses from its fetch
// as the bytes arrive. Nothing is read ahead.
func (w *Worker) readRandom(ctx context.Context, ref *pb.BlockRef, off, end int64, send func(*pb.ReadResponse) error) error {
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	wait, mine := w.claimFlights(ctx, ref, off, end-off, w.cfg.FetchChunk, nil, w.fineFor(ref, true))
	flights := append(wait, mine...)
	w.stats.count(len(flights) > 0)
	if len(mine) > 0 {
		defer w.fillWhenIdle(ref)
	}
	out := func(p []byte) error {
		if err := send(&pb.ReadResponse{Data: p}); err != nil {
			return err
		}
		w.stats.rpcBytesRead.Add(uint64(len(p)))
		return nil
	}
	for pos := off; pos < end; {
		f, next := flightAt(flights, pos, end)
		var err error
		if f != nil {
			pos, err = sendArriving(ctx, f, pos, min(f.end, end), out)
		} else {
			pos, err = w.sendCached(ctx, ref, key, pos, next, out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// flightAt returns the flight of flights that covers pos, if any, and
// where the next flight after pos starts (end if none does before).
func flightAt(flights []*inflight, pos, end int64) (cover *inflight, next int64) {
	next = end
	for _, f := range flights {
		if f.off <= pos && pos < f.end {
			return f, next
		}
		if f.off > pos && f.off < next {
			next = f.off
		}
	}
	return nil, next
}

// sendArriving sends [pos, hi) of flight f by out as its bytes arrive, in
// messages of at most chunkSize bytes, and returns hi.
func sendArriving(ctx context.Context, f *inflight, pos, hi int64, out func([]byte) error) (int64, error) {
	for pos < hi {
		p, err := f.arrived.next(ctx, pos-f.off)
		if err != nil {
			return pos, err
		}
		p = p[:min(int64(len(p)), hi-pos, chunkSize)]
		if err := out(p); err != nil {
			return pos, err
		}
		pos += int64(len(p))
	}
	return hi, nil
}

// sendCached sends [pos, hi), which the cache held when the read began,
// from the cache by out, and returns hi. What it no longer holds (evicted,
// or dropped as corrupt since) comes from the bucket, uncached.
func (w *Worker) sendCached(ctx context.Context, ref *pb.BlockRef, key string, pos, hi int64, out func([]byte) error) (int64, error) {
	buf := make([]byte, min(chunkSize, hi-pos))
	for pos < hi {
		p := buf[:min(int64(len(buf)), hi-pos)]
		if _, err := w.cache.ReadAt(key, p, pos); err != nil {
			if !errors.Is(err, cache.ErrMiss) && !errors.Is(err, cache.ErrCorrupt) {
				return pos, err
			}
			if err := w.fetchInto(ctx, ref, p, pos); err != nil {
				return pos, err
			}
		}
		if err := out(p); err != nil {
			return pos, err
		}
		pos += int64(len(p))
	}
	return hi, nil
}

// arrival is the bytes of one fetch as they arrive from the bucket: the
// fetcher writes them in order into buf and calls add; readers take what
// has arrived past their position (next). Bytes once arrived never change.
type arrival struct {
	mu struct {
		sync.Mutex
		buf  []byte
		n    int64         // bytes of buf arrived
		err  error         // the fetch failed
		more chan struct{} // closed when n or err changes; nil: no one waits
	}
}

// start gives the arrival the buffer the fetch fills.
func (a *arrival) start(buf []byte) {
	a.mu.Lock()
	a.mu.buf = buf
	a.mu.Unlock()
}

// add records that n more bytes of buf arrived.
func (a *arrival) add(n int) {
	a.mu.Lock()
	a.mu.n += int64(n)
	a.wakeLocked()
	a.mu.Unlock()
}

// fail records that the fetch failed with err: readers still waiting get it.
func (a *arrival) fail(err error) {
	a.mu.Lock()
	a.mu.err = err
	a.wakeLocked()
	a.mu.Unlock()
}

func (a *arrival) wakeLocked() {
	if a.mu.more != nil {
		close(a.mu.more)
		a.mu.more = nil
	}
}

// next returns the bytes arrived from byte from of the fetch on, at least
// one, waiting for them; or the fetch's error, or ctx's.
func (a *arrival) next(ctx context.Context, from int64) ([]byte, error) {
	for {
		a.mu.Lock()
		if a.mu.n > from {
			p := a.mu.buf[from:a.mu.n]
			a.mu.Unlock()
			return p, nil
		}
		if err := a.mu.err; err != nil {
			a.mu.Unlock()
			return nil, err
		}
		if a.mu.more == nil {
			a.mu.more = make(chan struct{})
		}
		more := a.mu.more
		a.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// arrivingReader reads a fetch's body into its buffer (io.ReadFull's
// successive reads fill it in order) and tells its arrival of each read.
type arrivingReader struct {
	io.Reader
	a *arrival
}

func (r *arrivingReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if n > 0 {
		r.a.add(n)
	}
	return n, err
}
