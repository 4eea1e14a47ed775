package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/stratafs/strata/internal/object"
)

// Put implements object.Store: write a temp file (a large body past the
// page cache, direct.go), fsync it, rename it over the key, fsync the
// directory. A crash leaves the old object or the new one,
// plus at worst a temp file that New removes later. A marker is a directory.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	info, err := s.put(ctx, key, r, size)
	return info, object.WrapError(object.OpPut, key, err)
}

func (s *Store) put(ctx context.Context, key string, r io.Reader, size int64) (object.Info, error) {
	rel, err := s.rel(key)
	if err == nil {
		err = object.ValidatePut(key, size)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, err
	}
	if object.IsMarker(key) {
		return s.putMarker(key, rel)
	}
	fill := body(ctx, r, size)
	if size >= directMin {
		fill = func(f *os.File) error { return fillDirect(ctx, f, r, size) }
	}
	t, err := s.writeTemp(fill)
	if err != nil {
		return object.Info{}, err
	}
	return s.publish(t, key, rel)
}

// PutsWhole implements object.WholePutter: a part is a file of its own,
// which CompleteMultipart copies into the object, so a Put writes (and
// fsyncs) each byte once where parts write it twice.
func (s *Store) PutsWhole() bool { return true }

// copyBuf is the size of the writes that fill a temp file.
const copyBuf = 1 << 20

// body fills a temp file with exactly size bytes of r, in writes of up to
// copyBuf bytes. NB: not io.Copy, whose *os.File.ReadFrom falls back to
// 32 KiB writes for a body in memory.
func body(ctx context.Context, r io.Reader, size int64) func(f *os.File) error {
	return func(f *os.File) error {
		buf := make([]byte, min(max(size, 1), copyBuf))
		_, err := io.CopyBuffer(struct{ io.Writer }{f}, &ctxReader{ctx: ctx, r: object.SizedReader(r, size)}, buf)
		return err
	}
}

// publish renames the temp file t to rel, the path of key, discards t, and
// returns the object's Info as of the rename (which changes the ctime).
func (s *Store) publish(t *temp, key, rel string) (object.Info, error) {
	defer t.discard()
	dir, name := split(rel)
	var err error
	for range dirTries {
		var parent *os.File
		if parent, err = s.mkdirs(dir); err != nil {
			return object.Info{}, err
		}
		// NB: a Delete may prune the directory between its creation and
		// the rename; then create it again.
		err = renameAt(t.dir, t.name, parent, name)
		if err == nil {
			err = parent.Sync()
		}
		parent.Close()
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return object.Info{}, err
	}
	st, err := fstat(t.f)
	if err != nil {
		return object.Info{}, err
	}
	return fileInfo(key, st), nil
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

// Copy implements object.Store with a copy of the file's bytes through a
// temp file, as Put (the kernel copies them, copy_file_range, and may share
// extents where the file system can). NB: never a hard link: another program
// may rewrite a file in place, which must not change its copy, and a link
// changes the source's ctime and so its ETag.
func (s *Store) Copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	info, err := s.copy(ctx, src, srcETag, dst)
	return info, object.WrapError(object.OpCopy, src, err)
}

func (s *Store) copy(ctx context.Context, src, srcETag, dst string) (object.Info, error) {
	if err := object.ValidateCopy(src, dst); err != nil {
		return object.Info{}, err
	}
	srcRel, err := s.rel(src)
	if err != nil {
		return object.Info{}, err
	}
	dstRel, err := s.rel(dst)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return object.Info{}, err
	}
	if object.IsMarker(src) {
		if _, err := s.getMarker(src, srcRel, srcETag, 0, 0); err != nil {
			return object.Info{}, err
		}
		return s.putMarker(dst, dstRel)
	}
	in, info, err := s.openObject(src, srcRel, srcETag)
	if err != nil {
		return object.Info{}, err
	}
	defer in.Close()
	t, err := s.writeTemp(func(f *os.File) error { return copyFile(ctx, f, in, info) })
	if err != nil {
		return object.Info{}, err
	}
	return s.publish(t, dst, dstRel)
}

// copyFile copies the whole of in, of version info, to f; the source must
// not change meanwhile.
func copyFile(ctx context.Context, f, in *os.File, info object.Info) error {
	n, err := f.ReadFrom(io.LimitReader(in, info.Size))
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return err
	}
	if st, err := fstat(in); err != nil || n != info.Size || etag(st) != info.ETag {
		return fmt.Errorf("%w: %s was rewritten in place while being copied", object.ErrChanged, info.Key)
	}
	return nil
}
