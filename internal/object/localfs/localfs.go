// Package localfs is an object.Store kept in a local directory: the embedded
// default bucket of `strata server --dev`, and a backend for single-host
// setups. Object "a/b/c" is the file <root>/a/b/c, so the directory can be
// inspected with ordinary tools.
//
// Puts are atomic and durable: data goes to a temp file under <root>/.strata-tmp,
// is fsynced, renamed into place, and the directory is fsynced. It is not a
// MultipartStore (PutParallel falls back to Put), and unlike S3 it cannot hold
// both "a" and "a/b": the second Put of such a pair fails.
package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/object"
)

// tmpDir holds puts in flight. Being inside root keeps rename on one file
// system; the key rules forbid it as a first component so no object hides it.
const tmpDir = ".strata-tmp"

// staleTemp is the age past which New removes leftover temp files: older than
// any put in flight, including those of other processes sharing the root.
const staleTemp = time.Hour

// Store is an object store over a directory. Safe for concurrent use, also by
// several processes sharing the directory.
type Store struct {
	root string
}

var _ object.Store = (*Store)(nil)

// New opens (creating if need be) the store rooted at dir.
func New(dir string) (*Store, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(root, tmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("localfs: %w", err)
	}
	s := &Store{root: root}
	s.removeStaleTemps()
	return s, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// removeStaleTemps drops temp files left by crashed puts; best effort, as
// they only cost space.
func (s *Store) removeStaleTemps() {
	dir := filepath.Join(s.root, tmpDir)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// path maps a key to its file, refusing keys that could escape root.
func (s *Store) path(key string) (string, error) {
	if err := object.ValidateKey(key); err != nil {
		return "", err
	}
	if key == tmpDir || strings.HasPrefix(key, tmpDir+"/") {
		return "", fmt.Errorf("%w: %q is reserved", object.ErrInvalidKey, tmpDir)
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// Get implements object.Store.
func (s *Store) Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error) {
	f, info, err := s.open(ctx, key)
	if err != nil {
		return nil, object.WrapError(object.OpGet, key, err)
	}
	start, n, err := object.ClampRange(info.Size(), off, length)
	if err != nil {
		f.Close()
		return nil, object.WrapError(object.OpGet, key, err)
	}
	return &reader{ctx: ctx, r: io.NewSectionReader(f, start, n), f: f}, nil
}

func (s *Store) open(ctx context.Context, key string) (*os.File, fs.FileInfo, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, translate(err)
	}
	info, err := f.Stat()
	if err == nil && info.IsDir() {
		err = object.ErrNotFound // a directory is only a key prefix
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// reader stops a read when its context is done, as network readers do.
type reader struct {
	ctx context.Context
	r   io.Reader
	f   *os.File
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func (r *reader) Close() error { return r.f.Close() }

// Head implements object.Store.
func (s *Store) Head(ctx context.Context, key string) (object.Info, error) {
	p, err := s.path(key)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, err)
	}
	info, err := os.Stat(p)
	if err == nil && info.IsDir() {
		err = object.ErrNotFound
	}
	if err != nil {
		return object.Info{}, object.WrapError(object.OpHead, key, translate(err))
	}
	return object.Info{Key: key, Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Delete implements object.Store. It also removes directories the deletion
// left empty, so that they neither slow down List nor block a later Put of
// their own name as an object.
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.WrapError(object.OpDelete, key, err)
	}
	info, err := os.Lstat(p)
	if err != nil || info.IsDir() { // missing, or only a key prefix
		if err == nil || errors.Is(translate(err), object.ErrNotFound) {
			return nil
		}
		return object.WrapError(object.OpDelete, key, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return object.WrapError(object.OpDelete, key, err)
	}
	// NB: a concurrent Put may be about to rename into a directory removed
	// here; Put recreates it and retries.
	for dir := filepath.Dir(p); dir != s.root; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): ancestors are not empty either
			break
		}
	}
	return nil
}

// translate maps "no such file" to object.ErrNotFound, keeping the cause.
// ENOTDIR means a key's parent is an object, so the key does not exist either.
func translate(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %w", object.ErrNotFound, err)
	}
	return err
}
