package localfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/object"
)

// Streams implements object.Streamer: a streamed Put fills its temp file as
// the body is written, and waits for more holding nothing but that file.
func (s *Store) Streams() bool { return true }

// StartPut implements object.Streamer: the body goes into a temp file as it
// is written; Commit fsyncs it and publishes it as Put does (rename over the
// key, fsync of the directory). A crash before Commit leaves the temp file
// only, which New removes later.
func (s *Store) StartPut(ctx context.Context, key string) (object.PutStream, error) {
	ps, err := s.startPut(ctx, key)
	if err != nil {
		return nil, object.WrapError(object.OpPut, key, err)
	}
	return ps, nil
}

func (s *Store) startPut(ctx context.Context, key string) (*putStream, error) {
	p, err := s.path(key)
	if err == nil {
		err = object.ValidateKey(key)
	}
	if err == nil && object.IsMarker(key) {
		err = fmt.Errorf("%w: a directory marker (a key ending in \"/\") is not streamed", object.ErrInvalidKey)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return nil, err
	}
	return &putStream{s: s, key: key, path: p, f: f}, nil
}

// putStream is a streamed Put into a temp file.
type putStream struct {
	s    *Store
	key  string
	path string
	f    *os.File // nil once committed or aborted
	err  error    // the first failed write: Commit fails with it
}

func (p *putStream) Write(b []byte) (int, error) {
	if p.f == nil {
		return 0, object.WrapError(object.OpPut, p.key, os.ErrClosed)
	}
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.f.Write(b)
	if err != nil {
		p.err = object.WrapError(object.OpPut, p.key, err)
	}
	return n, p.err
}

func (p *putStream) Commit(ctx context.Context) (object.Info, error) {
	info, err := p.commit(ctx)
	return info, object.WrapError(object.OpPut, p.key, err)
}

func (p *putStream) commit(ctx context.Context) (object.Info, error) {
	f := p.f
	if f == nil {
		return object.Info{}, os.ErrClosed
	}
	p.f = nil
	err := p.err
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = f.Sync() // data durable before the rename makes it visible
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return object.Info{}, err
	}
	return p.s.publish(f, p.key, p.path)
}

func (p *putStream) Abort() {
	if p.f == nil {
		return
	}
	p.f.Close()
	os.Remove(p.f.Name())
	p.f = nil
}
