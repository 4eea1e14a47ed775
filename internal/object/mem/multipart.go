package mem

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// CreateMultipart implements object.Store.
func (s *Store) CreateMultipart(ctx context.Context, key string) (object.Upload, error) {
	if err := object.ValidateUpload(key); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	if err := ctx.Err(); err != nil {
		return object.Upload{}, object.WrapError(object.OpCreateMultipart, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newUploadIDLocked()
	now := time.Now()
	s.mu.uploads[id] = &upload{key: key, started: now, parts: make(map[int][]byte)}
	return object.Upload{Key: key, ID: id, Started: now}, nil
}

// UploadPart implements object.Store.
func (s *Store) UploadPart(ctx context.Context, u object.Upload, num int, r io.Reader, size int64) (object.Part, error) {
	if err := object.ValidatePart(u.Key, num, size); err != nil {
		return object.Part{}, object.WrapError(object.OpUploadPart, u.Key, err)
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
	return object.Part{Num: num, ETag: partETag(data), Size: size}, nil
}

// partETag is S3's ETag for a part, so tags look familiar and a part given
// back to CompleteMultipart can be checked against what was uploaded.
func partETag(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// CompleteMultipart implements object.Store.
func (s *Store) CompleteMultipart(ctx context.Context, u object.Upload, parts []object.Part) (object.Info, error) {
	if err := ctx.Err(); err != nil {
		return object.Info{}, object.WrapError(object.OpCompleteMultipart, u.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	up, ok := s.mu.uploads[u.ID]
	if !ok || up.key != u.Key {
		return object.Info{}, object.WrapError(object.OpCompleteMultipart, u.Key, noSuchUpload(u))
	}
	data, err := assemble(up, parts)
	if err != nil {
		return object.Info{}, object.WrapError(object.OpCompleteMultipart, u.Key, err)
	}
	delete(s.mu.uploads, u.ID)
	return s.storeLocked(u.Key, data), nil
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
		if !ok || int64(len(b)) != p.Size || p.ETag != partETag(b) {
			return nil, fmt.Errorf("part %d not uploaded as given", p.Num)
		}
		if i < len(parts)-1 && len(b) < object.MinPartSize {
			return nil, fmt.Errorf("part %d smaller than %d bytes", p.Num, object.MinPartSize)
		}
		data = append(data, b...)
	}
	return data, nil
}

// AbortMultipart implements object.Store.
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

// ListUploads implements object.Store.
func (s *Store) ListUploads(ctx context.Context, prefix string) ([]object.Upload, error) {
	if err := ctx.Err(); err != nil {
		return nil, object.WrapError(object.OpListUploads, prefix, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []object.Upload
	for id, up := range s.mu.uploads {
		if strings.HasPrefix(up.key, prefix) {
			out = append(out, object.Upload{Key: up.key, ID: id, Started: up.started})
		}
	}
	slices.SortFunc(out, object.CompareUploads)
	return out, nil
}
