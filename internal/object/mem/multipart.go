package mem

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// CreateMultipart implements object.MultipartStore.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	if err := object.ValidateKey(key); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	if err := ctx.Err(); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newUploadIDLocked()
	s.mu.uploads[id] = &upload{key: key, parts: make(map[int][]byte)}
	return object.Upload{Key: key, ID: id}, nil
}

// UploadPart implements object.MultipartStore.
func (s *Store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if num < 1 || num > object.MaxParts {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key,
			fmt.Errorf("part number %d out of range 1..%d", num, object.MaxParts))
	}
	data, err := readBody(ctx, u.Key, r, size)
	if err != nil {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	up, ok := s.mu.uploads[u.ID]
	if !ok || up.key != u.Key {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, noSuchUpload(u))
	}
	up.parts[num] = data
	sum := md5.Sum(data) // S3's ETag for a part, so tags look familiar
	return object.Part{Num: num, ETag: hex.EncodeToString(sum[:]), Size: size}, nil
}

// CompleteMultipart implements object.MultipartStore.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) error {
	if err := ctx.Err(); err != nil {
		return object.WrapError(object.OpCompleteMultipart, u.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	up, ok := s.mu.uploads[u.ID]
	if !ok || up.key != u.Key {
		return object.WrapError(object.OpCompleteMultipart, u.Key, noSuchUpload(u))
	}
	data, err := assemble(up, parts)
	if err != nil {
		return object.WrapError(object.OpCompleteMultipart, u.Key, err)
	}
	delete(s.mu.uploads, u.ID)
	s.mu.objects[u.Key] = entry{data: data, mod: time.Now()}
	return nil
}

// assemble checks parts against what was uploaded, with S3's rules, and
// concatenates them.
func assemble(up *upload, parts []object.Part) ([]byte, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no parts")
	}
	if !slices.IsSortedFunc(parts, func(a, b object.Part) int { return a.Num - b.Num }) {
		return nil, fmt.Errorf("parts not in ascending order")
	}
	var data []byte
	for i, p := range parts {
		b, ok := up.parts[p.Num]
		if !ok || int64(len(b)) != p.Size {
			return nil, fmt.Errorf("part %d not uploaded as given", p.Num)
		}
		if i < len(parts)-1 && len(b) < object.MinPartSize {
			return nil, fmt.Errorf("part %d smaller than %d bytes", p.Num, object.MinPartSize)
		}
		data = append(data, b...)
	}
	return data, nil
}

// AbortMultipart implements object.MultipartStore.
func (s *Store) AbortMultipart(ctx context.Context, u object.Upload) error {
	if err := ctx.Err(); err != nil {
		return object.WrapError(object.OpAbortMultipart, u.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.uploads, u.ID)
	return nil
}

func noSuchUpload(u object.Upload) error {
	return fmt.Errorf("%w: no multipart upload %q", object.ErrNotFound, u.ID)
}
