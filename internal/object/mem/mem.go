// Package mem is an in-memory object.Store for unit tests and for throwaway
// dev servers (mem:// URIs).
//
// It follows the object contracts exactly, including the multipart part-size
// rules and directory markers as plain zero-length objects, so that code
// tested against it behaves the same on S3. ETags are a per-store counter:
// every Put, Copy and completed upload gets a new one. It is not meant for
// large data: every object is a byte slice on the heap, listings sort every
// key, and nothing survives the process.
package mem

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// Store is an in-memory object store. The zero value is not usable; call New.
type Store struct {
	mu struct {
		sync.Mutex
		objects  map[string]entry
		uploads  map[string]*upload // by upload id
		nextID   int
		versions uint64 // the last ETag handed out
	}
}

type entry struct {
	data []byte // never mutated once stored: readers and copies share it
	mod  time.Time
	etag string
}

func (e entry) info(key string) object.Info {
	return object.Info{Key: key, Size: int64(len(e.data)), ModTime: e.mod, ETag: e.etag}
}

type upload struct {
	key     string
	started time.Time
	parts   map[int][]byte
}

var _ object.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.mu.objects = make(map[string]entry)
	s.mu.uploads = make(map[string]*upload)
	return s
}

// Put implements object.Store.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	data, err := readBody(ctx, key, r, size)
	if err != nil {
		return object.Info{}, object.WrapError(object.OpPut, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeLocked(key, data), nil
}

// storeLocked makes data the object under key, as a new version.
func (s *Store) storeLocked(key string, data []byte) object.Info {
	s.mu.versions++
	e := entry{data: data, mod: time.Now(), etag: strconv.FormatUint(s.mu.versions, 16)}
	s.mu.objects[key] = e
	return e.info(key)
}

// readBody checks the key and reads the whole body before anything is stored,
// which is what makes Put atomic.
func readBody(ctx context.Context, key string, r io.Reader, size int64) ([]byte, error) {
	if err := object.ValidatePut(key, size); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data := make([]byte, 0, size)
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(object.SizedReader(r, size)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Get implements object.Store.
func (s *Store) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	return s.GetVersion(ctx, key, "", off, length)
}

// GetVersion implements object.Store. Objects are never changed in place, so
// the version checked is the version read.
func (s *Store) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	e, err := s.lookup(ctx, object.OpGet, key, etag)
	if err != nil {
		return nil, err
	}
	start, n, err := object.ClampRange(int64(len(e.data)), off, length)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return &reader{Reader: bytes.NewReader(e.data[start : start+n]), info: e.info(key)}, nil
}

type reader struct {
	*bytes.Reader
	info object.Info
}

func (r *reader) Close() error      { return nil }
func (r *reader) Info() object.Info { return r.info }

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	e, err := s.lookup(ctx, object.OpHead, key, "")
	if err != nil {
		return object.Info{}, err
	}
	return e.info(key), nil
}

// lookup returns the object under key, of version etag unless etag is "".
func (s *Store) lookup(ctx context.Context, op object.Op, key, etag string) (entry, error) {
	if err := object.ValidateKey(key); err != nil {
		return entry{}, object.WrapError(op, key, err)
	}
	if err := ctx.Err(); err != nil {
		return entry{}, object.WrapError(op, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.mu.objects[key]
	switch {
	case etag != "" && e.etag != etag:
		return entry{}, object.WrapError(op, key, object.Changed(etag, e.etag))
	case !ok:
		return entry{}, object.WrapError(op, key, object.ErrNotFound)
	}
	return e, nil
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

// Copy implements object.Store. The copy shares the source's bytes.
func (s *Store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	if err := object.ValidateCopy(src, dst); err != nil {
		return object.Info{}, object.WrapError(object.OpCopy, src, err)
	}
	e, err := s.lookup(ctx, object.OpCopy, src, srcETag)
	if err != nil {
		return object.Info{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeLocked(dst, e.data), nil
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
