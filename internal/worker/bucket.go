package worker

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
)

// A bucket that stops answering: the retry layer (objstore's policy) bounds
// every request; what is left to the worker is to say so in the right class
// and to clean up after the writes it gave up.

// bucketErr translates a bucket failure the retry layer gave up on (still
// of a kind that may pass: timeouts, throttling, refused connections) into
// the unavailable class, keeping its text, for clients to report as
// temporary. Other errors are returned as they are.
func bucketErr(err error) error {
	if err == nil || !object.IsRetryable(err) {
		return err
	}
	return fserr.Errorf(fserr.ErrUnavailable, "the bucket is unavailable: %v", err)
}

// abandon returns the hook that hands the failed uploads of store to the
// worker's aborter.
func (w *Worker) abandon(store object.Store) func(object.Upload) {
	return func(u object.Upload) { w.aborts.abandon(store, u) }
}

// aborter aborts the multipart uploads that failed writes abandoned, in the
// background: a failed write answers its client at once rather than after
// an abort that waits on the same unresponsive bucket, and an abort that
// fails is tried again every interval until it succeeds (the bucket came
// back) or the worker closes. It also sweeps each bucket the worker uses
// for uploads under blocks/ older than Config.AbandonedUploadAge, which a
// worker that died mid-write left, where the store can list uploads by prefix (not
// MinIO, which lists by whole key only and expires stale uploads itself).
type aborter struct {
	log      *slog.Logger
	interval time.Duration
	done     chan struct{} // closed by close
	mu       struct {
		sync.Mutex
		pending map[string]abandoned // by upload id
		running bool                 // a retry loop is running
		closed  bool
	}
}

// abandoned is an upload to abort, with the store it is in; an Upload
// with no ID stands for every upload of its key (a CreateMultipart whose
// answers were lost), aborted by listing the key's uploads, until a
// listing at least one interval after the first that answered finds none:
// a store that was hung runs the requests it had queued when it resumes,
// maybe after the first listing.
type abandoned struct {
	store  object.Store
	u      object.Upload
	passes int // listings of the key that answered
}

// id is the upload's key in the pending map.
func (p abandoned) id() string {
	if p.u.ID == "" {
		return "key " + p.u.Key
	}
	return p.u.ID
}

func newAborter(log *slog.Logger, interval time.Duration) *aborter {
	a := &aborter{log: log, interval: interval, done: make(chan struct{})}
	a.mu.pending = map[string]abandoned{}
	return a
}

// abandon queues u of store for abort, tried at once.
func (a *aborter) abandon(store object.Store, u object.Upload) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.closed {
		return
	}
	p := abandoned{store: store, u: u}
	a.mu.pending[p.id()] = p
	if !a.mu.running {
		a.mu.running = true
		go a.retryLoop()
	}
}

// retryLoop aborts the pending uploads until none is left.
func (a *aborter) retryLoop() {
	for {
		a.mu.Lock()
		todo := make([]abandoned, 0, len(a.mu.pending))
		for _, p := range a.mu.pending {
			todo = append(todo, p)
		}
		if len(todo) == 0 || a.mu.closed {
			a.mu.running = false
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		for _, p := range todo {
			a.abort(p)
		}
		select {
		case <-a.done:
		case <-time.After(a.interval):
		}
	}
}

func (a *aborter) abort(p abandoned) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-a.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	done, err := a.abortOnce(ctx, p)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		a.log.Warn("aborting an abandoned upload failed; will try again", "key", p.u.Key, "upload", p.u.ID, "in", a.interval, "err", err)
	case done:
		delete(a.mu.pending, p.id())
	default:
		p.passes++
		a.mu.pending[p.id()] = p
	}
}

// abortOnce aborts p's upload, or the uploads of its key, and reports
// whether p is done.
func (a *aborter) abortOnce(ctx context.Context, p abandoned) (bool, error) {
	if p.u.ID != "" {
		err := p.store.AbortMultipart(ctx, p.u)
		return err == nil, err
	}
	ups, err := p.store.ListUploads(ctx, p.u.Key)
	if err != nil {
		return false, err
	}
	found := false
	for _, u := range ups {
		if u.Key != p.u.Key {
			continue
		}
		found = true
		if err := p.store.AbortMultipart(ctx, u); err != nil {
			return false, err
		}
		a.log.Info("aborted an upload a lost answer had started", "key", u.Key, "upload", u.ID)
	}
	return !found && p.passes >= 1, nil
}

// sweep aborts the uploads under blocks/ of store older than age, now and
// every interval, until the worker closes. A store that cannot list
// uploads by prefix ends it.
func (a *aborter) sweep(uri string, store object.Store, every, age time.Duration) {
	for {
		ups, err := store.ListUploads(context.Background(), blocks.Prefix)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			a.log.Debug("the bucket cannot list uploads by prefix: no sweep", "bucket", uri)
			return
		case err != nil:
			a.log.Warn("listing abandoned uploads failed", "bucket", uri, "err", err)
		}
		for _, u := range ups {
			if time.Since(u.Started) > age {
				a.log.Info("aborting an abandoned upload", "bucket", uri, "key", u.Key, "started", u.Started)
				a.abandon(store, u)
			}
		}
		select {
		case <-a.done:
			return
		case <-time.After(every):
		}
	}
}

// close stops the loops; uploads still pending are left to the sweeps.
func (a *aborter) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.mu.closed {
		a.mu.closed = true
		close(a.done)
	}
}
