package retry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// New wraps inner so that its calls are retried by p.
func New(inner object.Store, p Policy) object.Store {
	return &store{inner: inner, p: p.withDefaults()}
}

type store struct {
	inner object.Store
	p     Policy
}

// PutsWhole implements object.WholePutter for the store it wraps.
func (s *store) PutsWhole() bool { return object.PutsWhole(s.inner) }

// run retries call under the policy, each attempt timed.
func (s *store) run(ctx context.Context, op object.Op, key string, call func(context.Context) error) error {
	_, err := s.loop(ctx, op, key, 0, nil, time.Time{}, s.timed(ctx, op, key, func(ctx context.Context, _ *watchdog) error {
		return call(ctx)
	}))
	return err
}

// do retries call, a Store call returning a T, under the policy.
func do[T any](s *store, ctx context.Context, op object.Op, key string, call func(context.Context) (T, error)) (T, error) {
	var v T
	err := s.run(ctx, op, key, func(ctx context.Context) (err error) {
		v, err = call(ctx)
		return err
	})
	return v, err
}

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) (info object.Info, err error) {
	err = s.send(ctx, object.OpPut, key, r, size, func(ctx context.Context, body io.Reader) (err error) {
		info, err = s.inner.Put(ctx, key, body, size)
		return err
	})
	return info, err
}

// send retries an upload of a body, giving each attempt a fresh reader of
// it. Every attempt reads through its own io.SectionReader, since an HTTP
// transport may still be reading the previous attempt's body when it fails.
func (s *store) send(ctx context.Context, op object.Op, key string, r io.Reader, size int64, call func(context.Context, io.Reader) error) error {
	ra, start, err := s.replayable(r, size)
	if err != nil {
		return object.WrapError(op, key, err)
	}
	if ra == nil { // cannot be sent twice: one attempt
		return s.timed(ctx, op, key, func(ctx context.Context, w *watchdog) error {
			return call(ctx, streamBody{r: r, w: w})
		})()
	}
	_, err = s.loop(ctx, op, key, 0, nil, time.Time{}, s.timed(ctx, op, key, func(ctx context.Context, w *watchdog) error {
		return call(ctx, sendBody{SectionReader: io.NewSectionReader(ra, start, size), w: w})
	}))
	return err
}

// replayable returns r as an io.ReaderAt and the offset of the body in it,
// copying the body to memory when it is small enough and r cannot read at
// offsets; or nil if the body can be read only once.
func (s *store) replayable(r io.Reader, size int64) (io.ReaderAt, int64, error) {
	if ra, ok := r.(io.ReaderAt); ok {
		start := int64(0)
		if sk, ok := r.(io.Seeker); ok { // the body starts at r's position
			pos, err := sk.Seek(0, io.SeekCurrent)
			if err != nil {
				return nil, 0, err
			}
			start = pos
		}
		if err := checkSize(ra, start, size); err != nil {
			return nil, 0, err
		}
		return ra, start, nil
	}
	if size < 0 || size > s.p.BufferLimit {
		return nil, 0, nil
	}
	b, err := io.ReadAll(object.SizedReader(r, size))
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(b), 0, nil
}

// checkSize probes the last byte of the body and the one after it. NB: each
// attempt reads through a SectionReader of exactly size bytes, which would
// cut a longer body silently and claim a size it cannot deliver for a
// shorter one, hiding the mismatch from the backend.
func checkSize(ra io.ReaderAt, start, size int64) error {
	b := make([]byte, 1)
	if n, _ := ra.ReadAt(b, start+size); n > 0 {
		return fmt.Errorf("%w: body longer than declared", object.ErrSizeMismatch)
	}
	if n, _ := ra.ReadAt(b, start+size-1); size > 0 && n == 0 {
		return fmt.Errorf("%w: body shorter than declared", object.ErrSizeMismatch)
	}
	return nil
}

func (s *store) Head(ctx context.Context, key string) (object.Info, error) {
	return do(s, ctx, object.OpHead, key, func(ctx context.Context) (object.Info, error) { return s.inner.Head(ctx, key) })
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	return do(s, ctx, object.OpList, prefix, func(ctx context.Context) ([]object.Info, error) {
		return s.inner.List(ctx, prefix, startAfter, limit)
	})
}

func (s *store) ListDir(ctx context.Context, prefix, token string, limit int) (entries []object.Entry, next string, err error) {
	err = s.run(ctx, object.OpListDir, prefix, func(ctx context.Context) (err error) {
		entries, next, err = s.inner.ListDir(ctx, prefix, token, limit)
		return err
	})
	return entries, next, err
}

// ListDirSkips implements object.SkipLister for the store it wraps.
func (s *store) ListDirSkips(ctx context.Context, prefix, token string, limit int) (entries []object.Entry, skipped []object.Skipped, next string, err error) {
	err = s.run(ctx, object.OpListDir, prefix, func(ctx context.Context) (err error) {
		entries, skipped, next, err = object.ListDirSkips(ctx, s.inner, prefix, token, limit)
		return err
	})
	return entries, skipped, next, err
}

func (s *store) Delete(ctx context.Context, key string) error {
	return s.run(ctx, object.OpDelete, key, func(ctx context.Context) error {
		return s.inner.Delete(ctx, key)
	})
}

// Copy is retried as it is idempotent: a repeated copy of one source writes
// the same object again.
func (s *store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	return do(s, ctx, object.OpCopy, src, func(ctx context.Context) (object.Info, error) {
		return s.inner.Copy(ctx, src, srcETag, dst)
	})
}

// CreateMultipart is retried although it is not idempotent: a retry after a
// lost response leaves an orphan upload, which costs space until someone
// aborts it (ListUploads finds it), and nothing else.
func (s *store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	return do(s, ctx, object.OpCreateMultipart, key, func(ctx context.Context) (object.Upload, error) {
		return s.inner.CreateMultipart(ctx, key)
	})
}

func (s *store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (p object.Part, err error) {
	err = s.send(ctx, object.OpUploadPart, u.Key, r, size, func(ctx context.Context, body io.Reader) (err error) {
		p, err = s.inner.UploadPart(ctx, u, num, body, size)
		return err
	})
	return p, err
}

// CompleteMultipart is retried, and a retry that finds the upload gone
// (object.ErrNotFound) checks whether an earlier attempt completed it before
// its response was lost.
func (s *store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	tries := 0
	return do(s, ctx, object.OpCompleteMultipart, u.Key, func(ctx context.Context) (object.Info, error) {
		tries++
		info, err := s.inner.CompleteMultipart(ctx, u, parts)
		if tries > 1 && errors.Is(err, object.ErrNotFound) {
			return s.checkCompleted(ctx, u, parts, err)
		}
		return info, err
	})
}

// checkCompleted decides a Complete that found no upload: only a Complete
// (or an Abort, which no one makes during a Complete) ends an upload, so it
// is a success if the object is there with the parts' total size, and
// notFound if not; a retryable failure of the check itself retries the whole
// attempt. NB: the size is a sanity check, not a proof: a concurrent writer
// of the key could have put an object of that size since.
func (s *store) checkCompleted(ctx context.Context, u object.Upload, parts []object.Part, notFound error) (object.Info, error) {
	var size int64
	for _, p := range parts {
		size += p.Size
	}
	info, err := s.inner.Head(ctx, u.Key)
	switch {
	case err == nil && info.Size == size:
		return info, nil
	case object.IsRetryable(err):
		return object.Info{}, err
	}
	return object.Info{}, notFound
}

func (s *store) AbortMultipart(ctx context.Context, u object.Upload) error {
	return s.run(ctx, object.OpAbortMultipart, u.Key, func(ctx context.Context) error {
		return s.inner.AbortMultipart(ctx, u)
	})
}

func (s *store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	return do(s, ctx, object.OpListUploads, prefix, func(ctx context.Context) ([]object.Upload, error) {
		return s.inner.ListUploads(ctx, prefix)
	})
}
