package localfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Paths below root. Every file the store touches is reached from root's
// descriptor, which New opens once, and never through a symbolic link:
// neither at a key's last component (a link is no object) nor at any
// component before it, where a link (ln -s / dir/root_link) would
// otherwise serve, overwrite and delete whatever the process may, anywhere
// on the host. Linux resolves a path so in one call, openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS; where that call is missing (ENOSYS:
// kernels before 5.6, some sandboxes) the store walks the path a component
// at a time, each opened with O_NOFOLLOW relative to the one before.
// Creating, renaming and removing go through the descriptor of the
// directory that holds the name (mkdirat, renameat, unlinkat), and none of
// those follows a link at the name itself. Keys arrive here checked
// (ValidateKey: no empty, "." or ".." component); the walk refuses such
// components again.

// openFd opens rel, a slash-separated path below root ("" is root itself),
// with flags, following no link; errors are *fs.PathError.
func (s *Store) openFd(rel string, flags int, perm uint32) (int, error) {
	if rel == "" {
		rel = "."
	}
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	for {
		fd, err := s.openBeneath(rel, flags, perm)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR:
			continue
		}
		return -1, &fs.PathError{Op: "open", Path: s.name(rel), Err: err}
	}
}

// openBeneath is openat2 below root, or the walk where there is none.
func (s *Store) openBeneath(rel string, flags int, perm uint32) (int, error) {
	// NB: root's descriptor is closed when s.dir is collected, which the
	// calls below must outlive.
	defer runtime.KeepAlive(s.dir)
	root := int(s.dir.Fd())
	if !s.noOpenat2.Load() {
		fd, err := openat2(root, rel, flags, perm)
		if err != unix.ENOSYS {
			return fd, err
		}
		s.noOpenat2.Store(true)
	}
	return walkOpen(root, rel, flags, perm)
}

// walkOpen opens rel below the directory dirfd a component at a time, none
// of them a link: each directory on the way is opened with O_NOFOLLOW
// relative to the one before it, and so is the last component, with flags.
func walkOpen(dirfd int, rel string, flags int, perm uint32) (int, error) {
	dir := dirfd
	defer func() {
		if dir != dirfd {
			unix.Close(dir)
		}
	}()
	for {
		name, rest, more := strings.Cut(rel, "/")
		if name == "" || name == ".." || (name == "." && rel != ".") {
			return -1, unix.EINVAL // no key has such a component
		}
		if !more {
			return unix.Openat(dir, name, flags|unix.O_NOFOLLOW, perm)
		}
		fd, err := unix.Openat(dir, name, searchFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if dir != dirfd {
			unix.Close(dir)
		}
		dir, rel = fd, rest
	}
}

// open is openFd as an *os.File named by its full path.
func (s *Store) open(rel string, flags int, perm uint32) (*os.File, error) {
	fd, err := s.openFd(rel, flags, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), s.name(rel)), nil
}

// openDir opens the directory rel ("" is root).
func (s *Store) openDir(rel string) (*os.File, error) {
	return s.open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// name is rel's full path, for messages only: nothing is opened by it.
func (s *Store) name(rel string) string {
	return filepath.Join(s.root, filepath.FromSlash(rel))
}

// split splits rel into its directory ("" for root) and its last name.
func split(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// openAt opens name in the directory d, not following a link at name.
func openAt(d *os.File, name string, flags int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Openat(int(d.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), join(d, name)), nil
		case unix.EINTR:
			continue
		}
		return nil, &fs.PathError{Op: "openat", Path: join(d, name), Err: err}
	}
}

// openRegular opens the regular file name in d for reading, and its status.
// NB: O_NONBLOCK, so that a FIFO there does not block the open; it is
// then refused (fs.ErrNotExist), as anything but a regular file is.
func openRegular(d *os.File, name string) (*os.File, *stat, error) {
	f, err := openAt(d, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := fstat(f)
	if err == nil && !st.isRegular() {
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: fs.ErrNotExist}
	}
	if err == nil {
		err = unix.SetNonblock(int(f.Fd()), false)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// join is the full path of name in d, for messages.
func join(d *os.File, name string) string { return filepath.Join(d.Name(), name) }

// noLink reports whether err says a path met a link or a non-directory
// where a directory was wanted (ELOOP, ENOTDIR): for a key, no object.
func noLink(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR)
}

// gone reports whether err says that a path is not there, or leads through
// a link or a file: its key has no object.
func gone(err error) bool { return errors.Is(err, fs.ErrNotExist) || noLink(err) }

// stat is what the store needs of a file's status, from fstat or fstatat.
type stat struct{ st unix.Stat_t }

func (s *stat) isDir() bool     { return uint32(s.st.Mode)&unix.S_IFMT == unix.S_IFDIR }
func (s *stat) isRegular() bool { return uint32(s.st.Mode)&unix.S_IFMT == unix.S_IFREG }
func (s *stat) size() int64     { return s.st.Size }

func (s *stat) modTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }

// identity returns what a file's ETag is derived from: device, inode,
// size, mtime and ctime in nanoseconds.
func (s *stat) identity() [5]uint64 {
	return [5]uint64{uint64(s.st.Dev), uint64(s.st.Ino), uint64(s.st.Size),
		uint64(s.st.Mtim.Nano()), uint64(s.st.Ctim.Nano())}
}

// sameFile reports whether a and b describe one inode.
func sameFile(a, b *stat) bool { return a.st.Dev == b.st.Dev && a.st.Ino == b.st.Ino }

// fstat returns the status of the open file f.
func fstat(f *os.File) (*stat, error) {
	var s stat
	if err := retryEINTR(func() error { return unix.Fstat(int(f.Fd()), &s.st) }); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return &s, nil
}

// lstatAt returns the status of name in d, of a link itself if it is one.
func lstatAt(d *os.File, name string) (*stat, error) {
	var s stat
	err := retryEINTR(func() error { return unix.Fstatat(int(d.Fd()), name, &s.st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return nil, &fs.PathError{Op: "fstatat", Path: join(d, name), Err: err}
	}
	return &s, nil
}

func mkdirAt(d *os.File, name string, perm uint32) error {
	if err := retryEINTR(func() error { return unix.Mkdirat(int(d.Fd()), name, perm) }); err != nil {
		return &fs.PathError{Op: "mkdirat", Path: join(d, name), Err: err}
	}
	return nil
}

// unlinkAt removes the file (flags 0) or empty directory (unix.AT_REMOVEDIR)
// name in d; a link there is removed itself, never its target.
func unlinkAt(d *os.File, name string, flags int) error {
	if err := retryEINTR(func() error { return unix.Unlinkat(int(d.Fd()), name, flags) }); err != nil {
		return &fs.PathError{Op: "unlinkat", Path: join(d, name), Err: err}
	}
	return nil
}

// renameAt renames from in fromDir to to in toDir, replacing what is there
// (a link there is replaced itself, never its target).
func renameAt(fromDir *os.File, from string, toDir *os.File, to string) error {
	err := retryEINTR(func() error { return unix.Renameat(int(fromDir.Fd()), from, int(toDir.Fd()), to) })
	if err != nil {
		return &os.LinkError{Op: "renameat", Old: join(fromDir, from), New: join(toDir, to), Err: err}
	}
	return nil
}

func retryEINTR(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// tempTries bounds the names tried for a temp file or directory.
const tempTries = 100

// createTemp creates a new file in d, named prefix and a random suffix,
// open for reading and writing.
func createTemp(d *os.File, prefix string) (*os.File, string, error) {
	for range tempTries {
		name := prefix + fmt.Sprintf("%016x", rand.Uint64())
		f, err := openAt(d, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, name, err
		}
	}
	return nil, "", fmt.Errorf("no free temp name in %s", d.Name())
}

// mkdirTemp creates a new directory in d, named prefix and a random suffix,
// and opens it.
func mkdirTemp(d *os.File, prefix string) (*os.File, string, error) {
	for range tempTries {
		name := prefix + fmt.Sprintf("%016x", rand.Uint64())
		err := mkdirAt(d, name, 0o700)
		if err == nil {
			sub, err := openAt(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				_ = unlinkAt(d, name, unix.AT_REMOVEDIR)
			}
			return sub, name, err
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("no free temp name in %s", d.Name())
}

// maxTreeDepth bounds removeTree: the store's temp trees are two deep.
const maxTreeDepth = 8

// removeTree removes name from d: a file, or a directory with all it
// holds. It follows no link (a link is removed itself) and goes no deeper
// than maxTreeDepth; what is missing is no error.
func removeTree(d *os.File, name string) error { return removeTreeAt(d, name, 0) }

func removeTreeAt(d *os.File, name string, depth int) error {
	err := unlinkAt(d, name, 0)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if !errors.Is(err, syscall.EISDIR) && !errors.Is(err, syscall.EPERM) { // EPERM: a directory, outside Linux
		return err
	}
	if depth >= maxTreeDepth {
		return fmt.Errorf("%s: deeper than %d directories", join(d, name), maxTreeDepth)
	}
	for range dirTries {
		if err := emptyDir(d, name, depth); err != nil {
			return err
		}
		err = unlinkAt(d, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
			return err
		}
		// Something was put in meanwhile (a part of an upload being aborted).
	}
	return err
}

// emptyDir removes what the directory name in d holds.
func emptyDir(d *os.File, name string, depth int) error {
	sub, err := openAt(d, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if gone(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer sub.Close()
	names, err := sub.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := removeTreeAt(sub, n, depth+1); err != nil {
			return err
		}
	}
	return nil
}
