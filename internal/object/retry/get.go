package retry

import (
	"context"
	"io"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Get returns a reader that, when the body breaks with a retryable error,
// reopens the object after the last byte it delivered and carries on. The
// attempt budget is shared by the opening and the reopenings that make no
// progress in between.
func (s *store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	r := &resumer{s: s, ctx: ctx, key: key, off: off, length: length}
	made, err := s.loop(ctx, object.OpGet, key, 0, nil, r.open)
	if err != nil {
		return nil, err
	}
	r.made = made
	return r, nil
}

// getAttempt opens the object once. AttemptTimeout covers the time to the
// reader only: the attempt's context must live as long as the reader, so it
// is cancelled by a timer that is stopped once the reader is there.
func (s *store) getAttempt(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	if s.p.AttemptTimeout <= 0 {
		return s.inner.Get(ctx, key, off, length)
	}
	actx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(s.p.AttemptTimeout, func() { cancel(errAttemptTimeout) })
	rc, err := s.inner.Get(actx, key, off, length)
	if !timer.Stop() && err == nil {
		// The timer fired as the reader arrived: its context is gone.
		rc.Close()
		err = actx.Err()
	}
	if err != nil {
		cancel(nil)
		return nil, s.timeoutErr(ctx, actx, object.OpGet, key, err)
	}
	return &cancelOnClose{ReadCloser: rc, cancel: cancel}, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel(nil)
	return err
}

// resumer is the reader Get returns.
type resumer struct {
	s           *store
	ctx         context.Context
	key         string
	off, length int64 // the range asked for; length < 0: to the end

	rc     io.ReadCloser
	pos    int64 // bytes delivered so far
	made   int   // requests made since the last byte delivered
	broken error // a retryable failure, to be mended by reopening
	err    error // sticky: the reader gave up
}

// open is one attempt at (re)opening the rest of the range.
func (r *resumer) open() error {
	length := r.length
	if length >= 0 {
		length -= r.pos
	}
	rc, err := r.s.getAttempt(r.ctx, r.key, r.off+r.pos, length)
	if err == nil {
		r.rc = rc
	}
	return err
}

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
	made, err := r.s.loop(r.ctx, object.OpGet, r.key, r.made, last, r.open)
	r.made, r.broken = made, nil
	if err != nil {
		r.err = err
		r.rc = io.NopCloser(nil)
	}
	return err
}

func (r *resumer) Close() error { return r.rc.Close() }
