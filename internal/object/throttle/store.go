package throttle

import (
	"context"
	"io"

	"github.com/stratafs/strata/internal/object"
)

type store struct {
	inner object.Store
	link  *Link
}

// PutsWhole implements object.WholePutter for the store it wraps.
func (s *store) PutsWhole() bool { return object.PutsWhole(s.inner) }

func (s *store) upload(ctx context.Context, r io.Reader) io.Reader {
	return s.link.ShapeWrite(ctx, r)
}

// call waits out the link's latency, then makes the request.
func call[T any](s *store, ctx context.Context, op object.Op, key string, req func() (T, error)) (T, error) {
	if err := s.link.delay(ctx); err != nil {
		var zero T
		return zero, object.WrapError(op, key, err)
	}
	return req()
}

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	return call(s, ctx, object.OpPut, key, func() (object.Info, error) {
		return s.inner.Put(ctx, key, s.upload(ctx, r), size)
	})
}

func (s *store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, func() (object.Reader, error) { return s.inner.Get(ctx, key, off, length) })
}

func (s *store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	return s.get(ctx, key, func() (object.Reader, error) { return s.inner.GetVersion(ctx, key, etag, off, length) })
}

// get makes a Get (or GetVersion) whose body is paced on the link.
func (s *store) get(ctx context.Context, key string, req func() (object.Reader, error)) (object.Reader, error) {
	rc, err := call(s, ctx, object.OpGet, key, req)
	if err != nil {
		return nil, err
	}
	return &shapedReader{shaped{ctx: ctx, link: s.link, dir: s.link.read, r: rc}, rc}, nil
}

// shapedReader is a Get's body, paced.
type shapedReader struct {
	shaped
	rc object.Reader
}

func (r *shapedReader) Close() error      { return r.rc.Close() }
func (r *shapedReader) Info() object.Info { return r.rc.Info() }

func (s *store) Head(ctx context.Context, key string) (object.Info, error) {
	return call(s, ctx, object.OpHead, key, func() (object.Info, error) { return s.inner.Head(ctx, key) })
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	return call(s, ctx, object.OpList, prefix, func() ([]object.Info, error) {
		return s.inner.List(ctx, prefix, startAfter, limit)
	})
}

func (s *store) ListDir(ctx context.Context, prefix, token string, limit int) ([]object.Entry, string, error) {
	if err := s.link.delay(ctx); err != nil {
		return nil, "", object.WrapError(object.OpListDir, prefix, err)
	}
	return s.inner.ListDir(ctx, prefix, token, limit)
}

// ListDirSkips implements object.SkipLister for the store it wraps.
func (s *store) ListDirSkips(ctx context.Context, prefix, token string, limit int) ([]object.Entry, []object.Skipped, string, error) {
	if err := s.link.delay(ctx); err != nil {
		return nil, nil, "", object.WrapError(object.OpListDir, prefix, err)
	}
	return object.ListDirSkips(ctx, s.inner, prefix, token, limit)
}

func (s *store) Delete(ctx context.Context, key string) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	return s.inner.Delete(ctx, key)
}

// Copy costs latency only: its bytes move inside the store, not over the
// link (S3's copies are server-side).
func (s *store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	return call(s, ctx, object.OpCopy, src, func() (object.Info, error) { return s.inner.Copy(ctx, src, srcETag, dst) })
}

func (s *store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	return call(s, ctx, object.OpCreateMultipart, key, func() (object.Upload, error) { return s.inner.CreateMultipart(ctx, key) })
}

func (s *store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	return call(s, ctx, object.OpUploadPart, u.Key, func() (object.Part, error) {
		return s.inner.UploadPart(ctx, u, num, s.upload(ctx, r), size)
	})
}

func (s *store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	return call(s, ctx, object.OpCompleteMultipart, u.Key, func() (object.Info, error) {
		return s.inner.CompleteMultipart(ctx, u, parts)
	})
}

func (s *store) AbortMultipart(ctx context.Context, u object.Upload) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpAbortMultipart, u.Key, err)
	}
	return s.inner.AbortMultipart(ctx, u)
}

func (s *store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	return call(s, ctx, object.OpListUploads, prefix, func() ([]object.Upload, error) { return s.inner.ListUploads(ctx, prefix) })
}
