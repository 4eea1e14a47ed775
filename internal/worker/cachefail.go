package worker

import (
	"context"
	"time"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A cache that cannot store (a full disk, an I/O error) still serves: the
// bytes a fetch brought are handed to its readers from memory (inflight's
// data), and the worker counts and logs the failure, once in a while.

// cacheFailed reports a Put the cache refused: counted in the worker's
// stats (CACHE-ERR in strata admin workers) and logged at most every
// cacheLogEvery with the count since the last line.
func (w *Worker) cacheFailed(key string, err error) {
	w.stats.cacheWriteErrors.Add(1)
	if n, ok := w.cacheErrs.Allow(time.Now()); ok {
		w.cfg.Log.Warn("the cache could not store pages; reads are served from memory and the bucket",
			"block", key, "err", err, "failures", n)
	}
}

// cacheLogEvery spaces the log lines of cache failures.
const cacheLogEvery = 10 * time.Second

// readHeld fills p, the bytes of the block at off, from the fetches in held
// (whose bytes the cache did not keep) where they cover it, and elsewhere
// from the cache, or from the bucket where the cache misses.
func (w *Worker) readHeld(ctx context.Context, ref *pb.BlockRef, key string, held []*inflight, p []byte, off int64) error {
	end := off + int64(len(p))
	for pos := off; pos < end; {
		next := end // where the next held range starts
		var cover *inflight
		for _, f := range held {
			if f.off <= pos && pos < f.end {
				cover = f
				break
			}
			if f.off > pos && f.off < next {
				next = f.off
			}
		}
		if cover != nil {
			n := copy(p[pos-off:], cover.data[pos-cover.off:min(cover.end, end)-cover.off])
			pos += int64(n)
			continue
		}
		seg := p[pos-off : next-off]
		if _, err := w.cache.ReadAt(key, seg, pos); err != nil {
			if err := w.fetchInto(ctx, ref, seg, pos); err != nil {
				return err
			}
		}
		pos = next
	}
	return nil
}
