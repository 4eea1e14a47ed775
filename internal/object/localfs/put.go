package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/object"
)

// renameTries bounds the race with Delete pruning the target's directory.
const renameTries = 5

// Put implements object.Store: write a temp file, fsync it, rename it over
// the key, fsync the directory. A crash leaves the old object or the new one,
// plus at worst a temp file that New removes later.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	p, err := s.path(key)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = s.put(ctx, p, r, size)
	}
	return object.WrapError(object.OpPut, key, err)
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64) error {
	if size < 0 {
		return fmt.Errorf("%w: negative size %d", object.ErrSizeMismatch, size)
	}
	tmp, err := s.writeTemp(ctx, r, size)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op once renamed
	dir := filepath.Dir(p)
	for range renameTries {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err = os.Rename(tmp, p); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// writeTemp copies exactly size bytes of r to a new fsynced temp file and
// returns its path.
func (s *Store) writeTemp(ctx context.Context, r io.Reader, size int64) (string, error) {
	f, err := os.CreateTemp(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, &ctxReader{ctx: ctx, r: object.SizedReader(r, size)})
	if err == nil {
		err = f.Sync() // data durable before the rename makes it visible
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
