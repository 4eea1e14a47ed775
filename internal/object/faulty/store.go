package faulty

import (
	"context"
	"fmt"
	"io"

	"github.com/stratafs/strata/internal/object"
)

// New wraps inner so that calls suffer the faults of in's rules. The result
// is an object.MultipartStore if inner is one.
func New(inner object.Store, in *Injector) object.Store {
	s := &store{inner: inner, in: in}
	if ms, ok := inner.(object.MultipartStore); ok {
		return &multipartStore{store: s, ms: ms}
	}
	return s
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

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	return s.in.pick(object.OpPut, key).apply(ctx, object.OpPut, key, func() error {
		return s.inner.Put(ctx, key, r, size)
	})
}

func (s *store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	f := s.in.pick(object.OpGet, key)
	var rc io.ReadCloser
	err := f.apply(ctx, object.OpGet, key, func() (err error) {
		rc, err = s.inner.Get(ctx, key, off, length)
		return err
	})
	if err != nil {
		if rc != nil { // the After case: the reader was handed out, then "lost"
			rc.Close()
		}
		return nil, err
	}
	if f.rule != nil && f.rule.Kind == ShortRead {
		rc = &shortReader{rc: rc, left: f.bytes, key: key}
	}
	return rc, nil
}

func (s *store) Head(ctx context.Context, key string) (info object.Info, err error) {
	err = s.in.pick(object.OpHead, key).apply(ctx, object.OpHead, key, func() (err error) {
		info, err = s.inner.Head(ctx, key)
		return err
	})
	return info, err
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) (infos []object.Info, err error) {
	err = s.in.pick(object.OpList, prefix).apply(ctx, object.OpList, prefix, func() (err error) {
		infos, err = s.inner.List(ctx, prefix, startAfter, limit)
		return err
	})
	return infos, err
}

func (s *store) Delete(ctx context.Context, key string) error {
	return s.in.pick(object.OpDelete, key).apply(ctx, object.OpDelete, key, func() error {
		return s.inner.Delete(ctx, key)
	})
}

// shortReader delivers left bytes, then fails as a dropped connection does.
type shortReader struct {
	rc   io.ReadCloser
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
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	return n, err // an early io.EOF is the real end: the range was shorter
}

func (r *shortReader) Close() error { return r.rc.Close() }

type multipartStore struct {
	*store
	ms object.MultipartStore
}

func (s *multipartStore) CreateMultipart(ctx context.Context, key string) (u object.Upload, err error) {
	err = s.in.pick(object.OpCreateMultipart, key).apply(ctx, object.OpCreateMultipart, key, func() (err error) {
		u, err = s.ms.CreateMultipart(ctx, key)
		return err
	})
	return u, err
}

func (s *multipartStore) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (p object.Part, err error) {
	err = s.in.pick(object.OpUploadPart, u.Key).apply(ctx, object.OpUploadPart, u.Key, func() (err error) {
		p, err = s.ms.UploadPart(ctx, u, num, r, size)
		return err
	})
	return p, err
}

func (s *multipartStore) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) error {
	return s.in.pick(object.OpCompleteMultipart, u.Key).apply(ctx, object.OpCompleteMultipart, u.Key, func() error {
		return s.ms.CompleteMultipart(ctx, u, parts)
	})
}

func (s *multipartStore) AbortMultipart(ctx context.Context, u object.Upload) error {
	return s.in.pick(object.OpAbortMultipart, u.Key).apply(ctx, object.OpAbortMultipart, u.Key, func() error {
		return s.ms.AbortMultipart(ctx, u)
	})
}
