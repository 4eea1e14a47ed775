// Package metered is a Store wrapper that reports every request it passes
// to a Meter: which operation, how long the store took to answer, and how
// it failed, for a process's metrics (internal/metrics implements Meter).
// Put it inside the retry layer, around the backend, so that each attempt
// is one request: retry.New(metered.New(backend, m), policy), with the
// policy's OnRetry reporting the retries (objstore.Retrying does both).
//
// It is not a logger, nor a retrier, nor a limiter: it changes no request
// and no answer. A Get is timed to its reader (the store's first answer),
// not to its last byte, which the caller's reading paces.
package metered

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Meter hears the requests of a store. Its methods are called on every
// request, concurrently, and must not block.
type Meter interface {
	// Request is one request of op that took d to answer; err is its
	// failure (nil: it succeeded).
	Request(op object.Op, d time.Duration, err error)
	// Retry is a request of op that failed with err and is to be made
	// again: the retry layer's Policy.OnRetry calls it (objstore.Metered
	// wires it).
	Retry(op object.Op, err error)
}

// New wraps inner so that m hears each of its requests.
func New(inner object.Store, m Meter) object.Store {
	return &store{inner: inner, m: m}
}

type store struct {
	inner object.Store
	m     Meter
}

// timed makes req, reporting it as a request of op.
func timed[T any](s *store, op object.Op, req func() (T, error)) (T, error) {
	start := time.Now()
	v, err := req()
	s.m.Request(op, time.Since(start), err)
	return v, err
}

// PutsWhole implements object.WholePutter for the store it wraps.
func (s *store) PutsWhole() bool { return object.PutsWhole(s.inner) }

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	return timed(s, object.OpPut, func() (object.Info, error) { return s.inner.Put(ctx, key, r, size) })
}

func (s *store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return timed(s, object.OpGet, func() (object.Reader, error) { return s.inner.Get(ctx, key, off, length) })
}

func (s *store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	return timed(s, object.OpGet, func() (object.Reader, error) { return s.inner.GetVersion(ctx, key, etag, off, length) })
}

func (s *store) Head(ctx context.Context, key string) (object.Info, error) {
	return timed(s, object.OpHead, func() (object.Info, error) { return s.inner.Head(ctx, key) })
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	return timed(s, object.OpList, func() ([]object.Info, error) { return s.inner.List(ctx, prefix, startAfter, limit) })
}

// page is a ListDir's answer, as one value for timed.
type page struct {
	entries []object.Entry
	skipped []object.Skipped
	next    string
}

func (s *store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	p, err := timed(s, object.OpListDir, func() (page, error) {
		e, next, err := s.inner.ListDir(ctx, prefix, token, limit)
		return page{entries: e, next: next}, err
	})
	return p.entries, p.next, err
}

// ListDirSkips implements object.SkipLister for the store it wraps.
func (s *store) ListDirSkips(ctx context.Context, prefix, token string, limit int) ([]object.Entry, []object.Skipped, string, error) {
	p, err := timed(s, object.OpListDir, func() (page, error) {
		e, sk, next, err := object.ListDirSkips(ctx, s.inner, prefix, token, limit)
		return page{entries: e, skipped: sk, next: next}, err
	})
	return p.entries, p.skipped, p.next, err
}

func (s *store) Delete(ctx context.Context, key string) error {
	_, err := timed(s, object.OpDelete, func() (struct{}, error) { return struct{}{}, s.inner.Delete(ctx, key) })
	return err
}

func (s *store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	return timed(s, object.OpCopy, func() (object.Info, error) { return s.inner.Copy(ctx, src, srcETag, dst) })
}

func (s *store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	return timed(s, object.OpCreateMultipart, func() (object.Upload, error) { return s.inner.CreateMultipart(ctx, key) })
}

func (s *store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	return timed(s, object.OpUploadPart, func() (object.Part, error) { return s.inner.UploadPart(ctx, u, num, r, size) })
}

func (s *store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	return timed(s, object.OpCompleteMultipart, func() (object.Info, error) { return s.inner.CompleteMultipart(ctx, u, parts) })
}

func (s *store) AbortMultipart(ctx context.Context, u object.Upload) error {
	_, err := timed(s, object.OpAbortMultipart, func() (struct{}, error) { return struct{}{}, s.inner.AbortMultipart(ctx, u) })
	return err
}

func (s *store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	return timed(s, object.OpListUploads, func() ([]object.Upload, error) { return s.inner.ListUploads(ctx, prefix) })
}

// Class names what kind of failure err is, in a word a metric's label can
// hold: "" for none, then by the object package's sentinels ("not_found",
// "throttled", "timeout", "transient", "changed", "invalid"), "canceled"
// for the caller's own end, and "other".
func Class(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	case errors.Is(err, object.ErrNotFound):
		return "not_found"
	case errors.Is(err, object.ErrThrottled):
		return "throttled"
	case errors.Is(err, object.ErrTimeout):
		return "timeout"
	case errors.Is(err, object.ErrChanged):
		return "changed"
	case errors.Is(err, object.ErrInvalidKey), errors.Is(err, object.ErrInvalidRange), errors.Is(err, object.ErrSizeMismatch):
		return "invalid"
	case errors.Is(err, object.ErrTransient), object.IsRetryable(err):
		return "transient"
	}
	return "other"
}
