package retry

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Get returns a reader that, when the body breaks with a retryable error,
// reopens the object after the last byte it delivered and carries on, with
// GetVersion of the version the first response came from: a resumed read
// never splices two versions, it fails with object.ErrChanged if the object
// was replaced meanwhile. (Were a store to give no ETag, it would resume
// unversioned.) The attempt budget is shared by the opening and the
// reopenings that make no progress in between.
func (s *store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, "", off, length)
}

// GetVersion is Get of version etag, which every reopening asks for too.
func (s *store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, etag, off, length)
}

func (s *store) get(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	r := &resumer{s: s, ctx: ctx, key: key, etag: etag, off: off, length: length, since: time.Now()}
	made, err := s.loop(ctx, object.OpGet, key, 0, nil, r.since, r.open)
	if err != nil {
		return nil, err
	}
	r.made = made
	return r, nil
}

// getAttempt opens the object once. AttemptTimeout covers the time to the
// reader only, and StallTimeout the time to the reader and then each Read
// that waits for bytes: the attempt's context must live as long as the
// reader, so it is cancelled by timers that stop once the reader is there,
// and by the watchdog of its Reads.
func (s *store) getAttempt(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	get := s.inner.Get
	if etag != "" {
		get = func(ctx context.Context, key string, off, length int64) (object.Reader, error) {
			return s.inner.GetVersion(ctx, key, etag, off, length)
		}
	}
	if s.p.AttemptTimeout <= 0 && s.p.StallTimeout <= 0 {
		return get(ctx, key, off, length)
	}
	actx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if s.p.AttemptTimeout > 0 {
		timer = time.AfterFunc(s.p.AttemptTimeout, func() { cancel(errAttemptTimeout) })
	}
	w := newWatchdog(s.p.StallTimeout, cancel)
	rc, err := get(actx, key, off, length)
	if timer != nil {
		timer.Stop()
	}
	w.disarm()
	if err == nil && actx.Err() != nil {
		// A timer fired as the reader arrived: its context is gone.
		rc.Close()
		err = actx.Err()
	}
	if err != nil {
		w.stop()
		cancel(nil)
		return nil, s.timeoutErr(ctx, actx, object.OpGet, key, err)
	}
	return &attemptReader{Reader: rc, s: s, ctx: ctx, actx: actx, key: key, cancel: cancel, w: w}, nil
}

// resumer is the reader Get returns.
type resumer struct {
	s           *store
	ctx         context.Context
	key         string
	etag        string // the version read: asked for, or the first response's
	off, length int64  // the range asked for; length < 0: to the end
	info        object.Info

	rc   io.ReadCloser
	pos  int64 // bytes delivered so far
	made int   // requests made since the last byte delivered
	// since is when the attempts without progress began, from which
	// MaxElapsed counts: a body that stalls again and again after its
	// headers came is not a fresh start each time.
	since  time.Time
	broken error // a retryable failure, to be mended by reopening
	err    error // sticky: the reader gave up
}

// open is one attempt at (re)opening the rest of the range.
func (r *resumer) open() error {
	length := r.length
	if length >= 0 {
		length -= r.pos
	}
	rc, err := r.s.getAttempt(r.ctx, r.key, r.etag, r.off+r.pos, length)
	if err != nil {
		return err
	}
	if r.rc == nil { // the first response: its version is the one to read
		r.info = rc.Info()
		r.etag = r.info.ETag
	}
	r.rc = rc
	return nil
}

// Info implements object.Reader: the version of the first response.
func (r *resumer) Info() object.Info { return r.info }

func (r *resumer) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.broken != nil {
		if err := r.reopen(); err != nil {
			return 0, err
		}
	}
	n, err := r.rc.Read(p)
	r.pos += int64(n)
	if n > 0 {
		r.made = 0
	}
	if err == nil || err == io.EOF || !object.IsRetryable(err) || r.ctx.Err() != nil {
		return n, err
	}
	if r.length >= 0 && r.pos >= r.length {
		return n, io.EOF // everything asked for arrived; only the end broke
	}
	// NB: r.made is not raised: the broken request was counted when opened.
	r.broken = err
	if r.made == 0 {
		r.since = time.Now()
	}
	if n > 0 {
		return n, nil // deliver what came; mend on the next Read
	}
	return r.Read(p)
}

// reopen replaces the broken body: at once if it had made progress, else
// after a backoff, as any failed attempt.
func (r *resumer) reopen() error {
	r.rc.Close()
	last := r.broken
	if r.made == 0 {
		last = nil
	}
	made, err := r.s.loop(r.ctx, object.OpGet, r.key, r.made, last, r.since, r.open)
	r.made, r.broken = made, nil
	if err != nil {
		r.err = fmt.Errorf("%w (resuming the read after %d bytes)", err, r.pos)
		r.rc = io.NopCloser(nil)
	}
	return r.err
}

func (r *resumer) Close() error { return r.rc.Close() }
