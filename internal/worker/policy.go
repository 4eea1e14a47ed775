package worker

import (
	"context"
	"errors"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/storagepolicy"
)

// Storage policies (internal/storagepolicy), as a file's block token
// carries its policy: a HOT file's blocks are pinned in the cache as they
// are written or read, a COLD file's written blocks are not kept in it,
// and a policy with a storage class has its blocks written through the
// bucket's view in that class.

// storeFor returns where blocks of policy p go in the bucket of uri.
func (w *Worker) storeFor(ctx context.Context, uri string, p storagepolicy.Policy) (object.Store, error) {
	if p.StorageClass != "" {
		var err error
		if uri, err = objstore.WithStorageClass(uri, p.StorageClass); err != nil {
			return nil, fserr.Errorf(fserr.ErrUnsupported, "storage policy %s: %v", p.Name, err)
		}
	}
	return w.stores.Get(ctx, uri)
}

// pin keeps the cached block key of a file of policy p, if p pins. A pin
// the cache refuses (the pinned blocks would take more than its low
// watermark) is counted in the cache's stats and logged once in a while:
// the block is cached all the same, but evictable.
func (w *Worker) pin(key string, p storagepolicy.Policy) {
	if !p.Pin {
		return
	}
	err := w.cache.Pin(key)
	switch {
	case err == nil, errors.Is(err, cache.ErrMiss):
	case errors.Is(err, cache.ErrPinsFull):
		if n, ok := w.pinErrs.Allow(time.Now()); ok {
			st := w.cache.Stats()
			w.cfg.Log.Warn("the cache cannot pin more HOT blocks: they are cached but may be evicted (give the worker more cache)",
				"block", key, "pinned", st.Pinned, "capacity", st.Capacity, "refused", n, "err", err)
		}
	default:
		w.cfg.Log.Debug("pin failed", "block", key, "err", err)
	}
}
