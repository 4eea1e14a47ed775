package faulty

import (
	"context"
	"fmt"
	"io"

	"github.com/stratafs/strata/internal/object"
)

// New wraps inner so that calls suffer the faults of in's rules. It hides
// inner's optional abilities (object.WholePutter): a large put goes
// multipart, so that rules on the multipart calls meet it on every store.
func New(inner object.Store, in *Injector) object.Store {
	return &store{inner: inner, in: in}
}

type store struct {
	inner object.Store
	in    *Injector
}

// apply injects f around call, which performs the real operation.
func (f fault) apply(ctx context.Context, op object.Op, key string, call func() error) error {
	if err := object.Sleep(ctx, f.delay); err != nil {
		return object.WrapError(op, key, err)
	}
	if f.rule == nil || f.rule.Kind == ShortRead || f.rule.Kind == Latency {
		return call()
	}
	if f.rule.After {
		if err := call(); err != nil {
			return err
		}
	}
	return object.WrapError(op, key, f.rule.failure(ctx))
}

func (r *Rule) failure(ctx context.Context) error {
	switch r.Kind {
	case Throttle:
		return fmt.Errorf("%w: injected 503 SlowDown", object.ErrThrottled)
	case Timeout:
		if r.Delay <= 0 {
			<-ctx.Done()
			return ctx.Err()
		}
		if err := object.Sleep(ctx, r.Delay); err != nil {
			return err
		}
		return fmt.Errorf("%w: injected after %v", object.ErrTimeout, r.Delay)
	}
	err := r.Err
	if err == nil {
		err = object.ErrTransient
	}
	return fmt.Errorf("injected: %w", err)
}

// do runs call, a Store call of op on key that returns a T, under the
// faults picked for it.
func do[T any](s *store, ctx context.Context, op object.Op, key string, call func() (T, error)) (T, error) {
	var v T
	err := s.in.pick(op, key).apply(ctx, op, key, func() (err error) {
		v, err = call()
		return err
	})
	return v, err
}

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	return do(s, ctx, object.OpPut, key, func() (object.Info, error) { return s.inner.Put(ctx, key, r, size) })
}

func (s *store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, func() (object.Reader, error) { return s.inner.Get(ctx, key, off, length) })
}

func (s *store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, func() (object.Reader, error) { return s.inner.GetVersion(ctx, key, etag, off, length) })
}

// get injects the faults of one Get (or GetVersion) made by call.
func (s *store) get(ctx context.Context, key string, call func() (object.Reader, error)) (object.Reader, error) {
	f := s.in.pick(object.OpGet, key)
	var rc object.Reader
	err := f.apply(ctx, object.OpGet, key, func() (err error) {
		rc, err = call()
		return err
	})
	if err != nil {
		if rc != nil { // the After case: the reader was handed out, then "lost"
			rc.Close()
		}
		return nil, err
	}
	if f.rule != nil && f.rule.Kind == ShortRead {
		rc = &shortReader{Reader: rc, left: f.bytes, key: key}
	}
	return rc, nil
}

func (s *store) Head(ctx context.Context, key string) (object.Info, error) {
	return do(s, ctx, object.OpHead, key, func() (object.Info, error) { return s.inner.Head(ctx, key) })
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	return do(s, ctx, object.OpList, prefix, func() ([]object.Info, error) {
		return s.inner.List(ctx, prefix, startAfter, limit)
	})
}

func (s *store) ListDir(ctx context.Context, prefix, token string, limit int) (entries []object.Entry, next string, err error) {
	err = s.in.pick(object.OpListDir, prefix).apply(ctx, object.OpListDir, prefix, func() (err error) {
		entries, next, err = s.inner.ListDir(ctx, prefix, token, limit)
		return err
	})
	return entries, next, err
}

// ListDirSkips implements object.SkipLister for the store it wraps, with
// ListDir's faults.
func (s *store) ListDirSkips(ctx context.Context, prefix, token string, limit int) (entries []object.Entry, skipped []object.Skipped, next string, err error) {
	err = s.in.pick(object.OpListDir, prefix).apply(ctx, object.OpListDir, prefix, func() (err error) {
		entries, skipped, next, err = object.ListDirSkips(ctx, s.inner, prefix, token, limit)
		return err
	})
	return entries, skipped, next, err
}

func (s *store) Delete(ctx context.Context, key string) error {
	return s.in.pick(object.OpDelete, key).apply(ctx, object.OpDelete, key, func() error {
		return s.inner.Delete(ctx, key)
	})
}

// Copy matches rules by the source key.
func (s *store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	return do(s, ctx, object.OpCopy, src, func() (object.Info, error) { return s.inner.Copy(ctx, src, srcETag, dst) })
}

// shortReader delivers left bytes, then fails as a dropped connection does.
type shortReader struct {
	object.Reader
	left int64
	key  string
}

func (r *shortReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, object.WrapError(object.OpGet, r.key,
			fmt.Errorf("%w: injected short read: %w", object.ErrTransient, io.ErrUnexpectedEOF))
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.Reader.Read(p)
	r.left -= int64(n)
	return n, err // an early io.EOF is the real end: the range was shorter
}

func (s *store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	return do(s, ctx, object.OpCreateMultipart, key, func() (object.Upload, error) { return s.inner.CreateMultipart(ctx, key) })
}

func (s *store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	return do(s, ctx, object.OpUploadPart, u.Key, func() (object.Part, error) {
		return s.inner.UploadPart(ctx, u, num, r, size)
	})
}

func (s *store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	return do(s, ctx, object.OpCompleteMultipart, u.Key, func() (object.Info, error) {
		return s.inner.CompleteMultipart(ctx, u, parts)
	})
}

func (s *store) AbortMultipart(ctx context.Context, u object.Upload) error {
	return s.in.pick(object.OpAbortMultipart, u.Key).apply(ctx, object.OpAbortMultipart, u.Key, func() error {
		return s.inner.AbortMultipart(ctx, u)
	})
}

func (s *store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	return do(s, ctx, object.OpListUploads, prefix, func() ([]object.Upload, error) { return s.inner.ListUploads(ctx, prefix) })
}
