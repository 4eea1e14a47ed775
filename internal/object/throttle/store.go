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

func (s *store) upload(ctx context.Context, r io.Reader) io.Reader {
	return &shaped{ctx: ctx, link: s.link, dir: s.link.write, r: r}
}

func (s *store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpPut, key, err)
	}
	return s.inner.Put(ctx, key, s.upload(ctx, r), size)
}

func (s *store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	if err := s.link.delay(ctx); err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	rc, err := s.inner.Get(ctx, key, off, length)
	if err != nil {
		return nil, err
	}
	return &shapedCloser{shaped{ctx: ctx, link: s.link, dir: s.link.read, r: rc}, rc}, nil
}

func (s *store) Head(ctx context.Context, key string) (object.Info, error) {
	if err := s.link.delay(ctx); err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, err)
	}
	return s.inner.Head(ctx, key)
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	if err := s.link.delay(ctx); err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	return s.inner.List(ctx, prefix, startAfter, limit)
}

func (s *store) Delete(ctx context.Context, key string) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	return s.inner.Delete(ctx, key)
}

type multipartStore struct {
	*store
	ms object.MultipartStore
}

func (s *multipartStore) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	if err := s.link.delay(ctx); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	return s.ms.CreateMultipart(ctx, key)
}

func (s *multipartStore) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if err := s.link.delay(ctx); err != nil {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, err)
	}
	return s.ms.UploadPart(ctx, u, num, s.upload(ctx, r), size)
}

func (s *multipartStore) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpCompleteMultipart, u.Key, err)
	}
	return s.ms.CompleteMultipart(ctx, u, parts)
}

func (s *multipartStore) AbortMultipart(ctx context.Context, u object.Upload) error {
	if err := s.link.delay(ctx); err != nil {
		return object.WrapError(object.OpAbortMultipart, u.Key, err)
	}
	return s.ms.AbortMultipart(ctx, u)
}
