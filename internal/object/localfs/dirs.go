package localfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/object"
)

// Directories: markers and implied prefixes (see the package comment).

// dirTries bounds the races with directories removed under a write.
const dirTries = 5

// errGone: the directory was removed (or replaced) before its lock was taken.
var errGone = errors.New("directory removed meanwhile")

// lockedDir runs fn on the directory name in parent, opened and locked: fn
// sees the directory that name holds while it holds the lock, or none
// (fs.ErrNotExist; ELOOP or ENOTDIR if name is a link or a file).
func lockedDir(parent *os.File, name string, fn func(d *os.File) error) error {
	d, err := openAt(parent, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := lock(d); err != nil {
		return err
	}
	// NB: the lock is on the inode; a Delete may have removed the directory
	// while we waited, and a Put made another one.
	held, err := fstat(d)
	if err != nil {
		return err
	}
	if now, err := lstatAt(parent, name); err != nil || !sameFile(held, now) {
		return errGone
	}
	return fn(d)
}

// headMarker returns the Info of the marker at directory rel.
func (s *Store) headMarker(key, rel string) (object.Info, error) {
	d, err := s.openDir(rel)
	if err != nil {
		return object.Info{}, translate(err)
	}
	defer d.Close()
	st, err := fstat(d)
	if err != nil {
		return object.Info{}, err
	}
	if imp, err := isImplied(d); err != nil || imp {
		if imp {
			err = fmt.Errorf("%w: %s is a prefix, not a marker", object.ErrNotFound, d.Name())
		}
		return object.Info{}, err
	}
	return fileInfo(key, st), nil
}

// getMarker serves a read of the marker at rel: no bytes.
func (s *Store) getMarker(key, rel, etag string, off, length int64) (object.Reader, error) {
	info, err := s.headMarker(key, rel)
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

// putMarker makes the directory rel a marker: creates it (its parents as
// implied ones), or clears its implied mark.
func (s *Store) putMarker(key, rel string) (object.Info, error) {
	dir, name := split(rel)
	for range dirTries {
		parent, err := s.mkdirs(dir)
		if err != nil {
			return object.Info{}, err
		}
		again, err := s.markIn(parent, name)
		parent.Close()
		switch {
		case again:
			continue
		case err != nil:
			return object.Info{}, err
		}
		return s.headMarker(key, rel)
	}
	return object.Info{}, fmt.Errorf("directory %s kept being removed", s.name(rel))
}

// markIn makes name in parent a marker directory; again says to start over,
// as a Delete removed the directory (or its parent) meanwhile.
func (s *Store) markIn(parent *os.File, name string) (again bool, err error) {
	err = mkdirAt(parent, name, 0o755)
	switch {
	case err == nil:
		return false, parent.Sync()
	case errors.Is(err, fs.ErrNotExist):
		return true, nil // a Delete pruned the parent meanwhile
	case !errors.Is(err, fs.ErrExist):
		return false, err
	}
	err = lockedDir(parent, name, clearImplied)
	switch {
	case errors.Is(err, errGone), errors.Is(err, fs.ErrNotExist):
		return true, nil
	case noLink(err):
		return false, fmt.Errorf("%w: an object or a link has the directory's name", err)
	}
	return false, err
}

// deleteMarker removes the marker directory rel if it is empty, and the
// implied directories that leaves empty; a marker with children becomes
// implied, so that it goes with its last child.
func (s *Store) deleteMarker(rel string) error {
	dir, name := split(rel)
	parent, err := s.openDir(dir)
	if gone(err) {
		return nil // no marker: nothing to delete
	}
	if err != nil {
		return err
	}
	defer parent.Close()
	removed := false
	err = lockedDir(parent, name, func(d *os.File) error {
		if imp, err := isImplied(d); err != nil || imp {
			return err // no marker here
		}
		err := unlinkAt(parent, name, unix.AT_REMOVEDIR)
		switch {
		case err == nil:
			removed = true
			return nil
		case errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
			return setImplied(d)
		}
		return err
	})
	switch {
	case errors.Is(err, errGone), gone(err):
		return nil // no marker: nothing to delete
	case err != nil:
		return err
	case removed:
		return s.prune(dir)
	}
	return nil
}

// prune removes the directory rel and its ancestors, up to root, while
// they are empty and implied.
func (s *Store) prune(rel string) error {
	for ; rel != ""; rel, _ = split(rel) {
		dir, name := split(rel)
		parent, err := s.openDir(dir)
		if gone(err) {
			return nil
		}
		if err != nil {
			return err
		}
		removed := false
		err = lockedDir(parent, name, func(d *os.File) error {
			imp, err := isImplied(d)
			if err == nil && imp {
				removed = unlinkAt(parent, name, unix.AT_REMOVEDIR) == nil // fails if not empty
			}
			return err
		})
		parent.Close()
		if err != nil && !errors.Is(err, errGone) && !gone(err) {
			return err
		}
		if !removed {
			return nil
		}
	}
	return nil
}

// mkdirs opens the directory rel ("" is root), first creating it and its
// missing parents as implied directories. A link or a file on the way
// fails it (ENOTDIR): nothing is created through a link.
func (s *Store) mkdirs(rel string) (*os.File, error) {
	var err error
	for range dirTries {
		var d *os.File
		if d, err = s.openDir(rel); !gone(err) {
			return d, err
		}
		if d, err = s.walkMkdirs(rel); !errors.Is(err, fs.ErrNotExist) {
			return d, err
		}
		// A Delete pruned a directory on the way, after it was opened and
		// before a child was made in it: again, from the root.
	}
	return nil, err
}

// walkMkdirs opens the directories of rel from the root down, creating
// the missing ones implied.
func (s *Store) walkMkdirs(rel string) (*os.File, error) {
	d, err := s.openDir("")
	if err != nil {
		return nil, err
	}
	for name := range strings.SplitSeq(rel, "/") {
		sub, err := s.subdir(d, name)
		d.Close()
		if err != nil {
			return nil, err
		}
		d = sub
	}
	return d, nil
}

// subdir opens the directory name in d, creating it implied if it is missing.
func (s *Store) subdir(d *os.File, name string) (*os.File, error) {
	for range dirTries {
		st, err := lstatAt(d, name)
		switch {
		case err == nil && st.isDir():
		case err == nil:
			return nil, &fs.PathError{Op: "mkdir", Path: join(d, name), Err: syscall.ENOTDIR}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		default:
			if err := s.newImplied(d, name); err != nil {
				return nil, err
			}
			if err := d.Sync(); err != nil {
				return nil, err
			}
		}
		sub, err := openAt(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return sub, err
		}
		// A Delete pruned it meanwhile: again.
	}
	return nil, fmt.Errorf("directory %s kept being removed", join(d, name))
}

// newImplied creates the directory name in parent, marked implied, unless
// it exists. It appears already marked: it is made in tmpDir, marked, and
// renamed into place unless someone made it meanwhile, so that no one sees
// it unmarked and takes it for a marker.
func (s *Store) newImplied(parent *os.File, name string) error {
	tmp, err := s.tmp()
	if err != nil {
		return err
	}
	defer tmp.Close()
	nd, tname, err := mkdirTemp(tmp, "dir-")
	if err != nil {
		return err
	}
	defer unlinkAt(tmp, tname, unix.AT_REMOVEDIR) // a no-op once renamed
	err = nd.Chmod(0o755)
	if err == nil {
		err = setImplied(nd)
	}
	nd.Close()
	if err != nil {
		return err
	}
	err = renameNoReplaceAt(tmp, tname, parent, name)
	switch {
	case errors.Is(err, errNoReplace):
		// NB: the directory is unmarked for a moment, in which a marker Put
		// finds nothing to clear and the directory ends implied although
		// the Put succeeded; only where renameat2 cannot refuse to replace.
		if err := mkdirAt(parent, name, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil
			}
			return err
		}
		return lockedDir(parent, name, setImplied)
	case errors.Is(err, fs.ErrExist):
		return nil // made meanwhile, by someone else
	}
	return err
}
