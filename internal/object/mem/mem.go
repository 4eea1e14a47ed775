// Package mem is an in-memory object.MultipartStore for unit tests and for
// throwaway dev servers (mem:// URIs).
//
// It follows the object contracts exactly, including the multipart part-size
// rules, so that code tested against it behaves the same on S3. It is not
// meant for large data: every object is a byte slice on the heap, and nothing
// survives the process.
package mem

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Store is an in-memory object store. The zero value is not usable; call New.
type Store struct {
	mu struct {
		sync.Mutex
		objects map[string]entry
		uploads map[string]*upload // by upload id
		nextID  int
	}
}

type entry struct {
	data []byte // never mutated once stored: readers share it
	mod  time.Time
}

type upload struct {
	key   string
	parts map[int][]byte
}

var _ object.MultipartStore = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.mu.objects = make(map[string]entry)
	s.mu.uploads = make(map[string]*upload)
	return s
}

// Put implements object.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	data, err := readBody(ctx, key, r, size)
	if err != nil {
		return object.WrapError(object.OpPut, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.objects[key] = entry{data: data, mod: time.Now()}
	return nil
}

// readBody checks the key and reads the whole body before anything is stored,
// which is what makes Put atomic.
func readBody(ctx context.Context, key string, r io.Reader, size int64) ([]byte, error) {
	if err := object.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size %d", object.ErrSizeMismatch, size)
	}
	data := make([]byte, 0, size)
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(object.SizedReader(r, size)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Get implements object.Store.
func (s *Store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	e, err := s.lookup(ctx, object.OpGet, key)
	if err != nil {
		return nil, err
	}
	start, n, err := object.ClampRange(int64(len(e.data)), off, length)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return io.NopCloser(bytes.NewReader(e.data[start : start+n])), nil
}

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	e, err := s.lookup(ctx, object.OpHead, key)
	if err != nil {
		return object.Info{}, err
	}
	return object.Info{Key: key, Size: int64(len(e.data)), ModTime: e.mod}, nil
}

func (s *Store) lookup(ctx context.Context, op object.Op, key string) (entry, error) {
	if err := object.ValidateKey(key); err != nil {
		return entry{}, object.WrapError(op, key, err)
	}
	if err := ctx.Err(); err != nil {
		return entry{}, object.WrapError(op, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.mu.objects[key]
	if !ok {
		return entry{}, object.WrapError(op, key, object.ErrNotFound)
	}
	return e, nil
}

// List implements object.Store. It sorts all keys on every call, which is
// fine for tests and nothing else.
func (s *Store) List(ctx context.Context, prefix, startAfter string, limit int) ([]object.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, object.WrapError(object.OpList, prefix, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []object.Info
	for k, e := range s.mu.objects {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			out = append(out, object.Info{Key: k, Size: int64(len(e.data)), ModTime: e.mod})
		}
	}
	slices.SortFunc(out, func(a, b object.Info) int { return strings.Compare(a.Key, b.Key) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Delete implements object.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := object.ValidateKey(key); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	if err := ctx.Err(); err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.objects, key)
	return nil
}

// Len returns the number of objects stored, for tests.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.objects)
}

// Uploads returns the number of multipart uploads in progress, for tests that
// check that failed uploads are aborted.
func (s *Store) Uploads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.uploads)
}

func (s *Store) newUploadIDLocked() string {
	s.mu.nextID++
	return "upload-" + strconv.Itoa(s.mu.nextID)
}
