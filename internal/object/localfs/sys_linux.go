package localfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// impliedAttr marks a directory that a Put created for an object's parents
// (an implied prefix, no marker); see the package comment.
const impliedAttr = "user.strata.implied"

// identity returns what a file's ETag is derived from: device, inode, size,
// mtime and ctime in nanoseconds.
func identity(fi fs.FileInfo) [5]uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [5]uint64{0, 0, uint64(fi.Size()), uint64(fi.ModTime().UnixNano()), 0}
	}
	return [5]uint64{st.Dev, st.Ino, uint64(st.Size),
		uint64(st.Mtim.Nano()), uint64(st.Ctim.Nano())}
}

// sameFile reports whether a and b describe one inode.
func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

// hasXattrs reports whether dir's file system keeps user extended
// attributes, by setting one on it and removing it again.
func hasXattrs(dir *os.File) bool {
	const probe = "user.strata.probe"
	if unix.Fsetxattr(int(dir.Fd()), probe, []byte{1}, 0) != nil {
		return false
	}
	_ = unix.Fremovexattr(int(dir.Fd()), probe)
	return true
}

func isImplied(dir *os.File) (bool, error) {
	_, err := unix.Fgetxattr(int(dir.Fd()), impliedAttr, nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENODATA):
		return false, nil
	}
	return false, &fs.PathError{Op: "getxattr", Path: dir.Name(), Err: err}
}

func setImplied(dir *os.File) error {
	if err := unix.Fsetxattr(int(dir.Fd()), impliedAttr, []byte{1}, 0); err != nil {
		return &fs.PathError{Op: "setxattr", Path: dir.Name(), Err: err}
	}
	return nil
}

func clearImplied(dir *os.File) error {
	err := unix.Fremovexattr(int(dir.Fd()), impliedAttr)
	if err != nil && !errors.Is(err, unix.ENODATA) {
		return &fs.PathError{Op: "removexattr", Path: dir.Name(), Err: err}
	}
	return nil
}

// lock takes an exclusive flock on f, which the holder keeps until it closes
// f; a process's other descriptors of the directory wait too.
func lock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			if err != nil {
				return &fs.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// renameNoReplace renames from to to unless to exists (fs.ErrExist then).
// errNoReplace says the file system cannot do it.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return errNoReplace
	}
	return &os.LinkError{Op: "renameat2", Old: from, New: to, Err: err}
}

const openNoFollow = syscall.O_NOFOLLOW
