package localfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/stratafs/strata/internal/object"
)

// Directories: markers and implied prefixes (see the package comment).

// dirTries bounds the races with directories removed under a write.
const dirTries = 5

// errGone: the directory was removed (or replaced) before its lock was taken.
var errGone = errors.New("directory removed meanwhile")

// lockedDir runs fn on the directory at p, opened and locked: fn sees the
// directory that p names while it holds the lock, or none (fs.ErrNotExist).
func lockedDir(p string, fn func(d *os.File) error) error {
	d, err := os.OpenFile(p, os.O_RDONLY|openNoFollow|syscall.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := lock(d); err != nil {
		return err
	}
	// NB: the lock is on the inode; a Delete may have removed the directory
	// while we waited, and a Put made another one.
	held, err := d.Stat()
	if err != nil {
		return err
	}
	if now, err := os.Lstat(p); err != nil || !sameFile(held, now) {
		return errGone
	}
	return fn(d)
}

// implied reports whether the directory p is implied; a missing one is not.
func (s *Store) implied(p string) (bool, error) {
	if !s.xattrs {
		return false, nil
	}
	d, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer d.Close()
	return isImplied(d)
}

// headMarker returns the Info of the marker at directory p.
func (s *Store) headMarker(key, p string) (object.Info, error) {
	fi, err := os.Lstat(p)
	if err == nil && !fi.IsDir() {
		err = fs.ErrNotExist
	}
	if err == nil {
		var imp bool
		if imp, err = s.implied(p); imp {
			err = fs.ErrNotExist // a prefix, not a marker
		}
	}
	if err != nil {
		return object.Info{}, translate(err)
	}
	return fileInfo(key, fi), nil
}

// getMarker serves a read of the marker at p: no bytes.
func (s *Store) getMarker(key, p, etag string, off, length int64) (object.Reader, error) {
	info, err := s.headMarker(key, p)
	switch {
	case err != nil:
		return nil, missing(etag, err)
	case etag != "" && etag != info.ETag:
		return nil, object.Changed(etag, info.ETag)
	}
	if _, _, err := object.ClampRange(0, off, length); err != nil {
		return nil, err
	}
	return emptyReader{info}, nil
}

type emptyReader struct{ info object.Info }

func (emptyReader) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyReader) Close() error             { return nil }
func (r emptyReader) Info() object.Info      { return r.info }

// putMarker makes the directory p a marker: creates it (its parents as
// implied ones), or clears its implied mark.
func (s *Store) putMarker(key, p string) (object.Info, error) {
	for range dirTries {
		if err := s.mkdirImplied(filepath.Dir(p)); err != nil {
			return object.Info{}, err
		}
		err := os.Mkdir(p, 0o755)
		switch {
		case err == nil:
			if err := syncDir(filepath.Dir(p)); err != nil {
				return object.Info{}, err
			}
			return s.headMarker(key, p)
		case errors.Is(err, fs.ErrNotExist):
			continue // a Delete pruned the parent meanwhile
		case !errors.Is(err, fs.ErrExist):
			return object.Info{}, err
		}
		err = lockedDir(p, func(d *os.File) error {
			if !s.xattrs {
				return nil
			}
			return clearImplied(d)
		})
		if errors.Is(err, errGone) || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return object.Info{}, fmt.Errorf("%w: an object has the directory's name", err)
		}
		if err != nil {
			return object.Info{}, err
		}
		return s.headMarker(key, p)
	}
	return object.Info{}, fmt.Errorf("directory %s kept being removed", p)
}

// deleteMarker removes the marker directory p if it is empty, and the
// implied directories that leaves empty; a marker with children becomes
// implied, so that it goes with its last child.
func (s *Store) deleteMarker(p string) error {
	removed := false
	err := lockedDir(p, func(d *os.File) error {
		if s.xattrs {
			if imp, err := isImplied(d); err != nil || imp {
				return err // no marker here
			}
		}
		err := syscall.Rmdir(p)
		switch {
		case err == nil:
			removed = true
			return nil
		case errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
			if s.xattrs {
				return setImplied(d)
			}
			return nil
		}
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	})
	switch {
	case errors.Is(err, errGone), errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil // no marker: nothing to delete
	case err != nil:
		return err
	case removed:
		return s.prune(filepath.Dir(p))
	}
	return nil
}

// prune removes dir and its ancestors, up to root, while they are empty and
// implied.
func (s *Store) prune(dir string) error {
	if !s.xattrs {
		return nil
	}
	for ; dir != s.root && strings.HasPrefix(dir, s.root); dir = filepath.Dir(dir) {
		removed := false
		err := lockedDir(dir, func(d *os.File) error {
			imp, err := isImplied(d)
			if err == nil && imp {
				removed = syscall.Rmdir(dir) == nil // fails if not empty
			}
			return err
		})
		if err != nil && !errors.Is(err, errGone) && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if !removed {
			return nil
		}
	}
	return nil
}

// mkdirImplied makes sure the directory dir exists, creating it and its
// missing parents as implied directories. Each appears already marked: it is
// made in tmpDir, marked, and renamed into place unless someone made it
// meanwhile, so that no one sees it unmarked and takes it for a marker.
func (s *Store) mkdirImplied(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	case dir == s.root:
		return err
	}
	if err := s.mkdirImplied(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := s.newImplied(dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// newImplied creates dir, marked implied, unless it exists.
func (s *Store) newImplied(dir string) error {
	if !s.xattrs {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.root, tmpDir), "dir-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // a no-op once renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := markImplied(tmp); err != nil {
		return err
	}
	err = renameNoReplace(tmp, dir)
	switch {
	case errors.Is(err, errNoReplace):
		// NB: the directory is unmarked for a moment, in which a marker Put
		// finds nothing to clear and the directory ends implied although
		// the Put succeeded; only where renameat2 cannot refuse to replace.
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil
			}
			return err
		}
		return markImplied(dir)
	case errors.Is(err, fs.ErrExist):
		return nil // made meanwhile, by someone else
	}
	return err
}

func markImplied(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return setImplied(d)
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
