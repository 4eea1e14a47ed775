package localfs

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// impliedAttr marks a directory that a Put created for an object's parents
// (an implied prefix, no marker); see the package comment.
const impliedAttr = "user.strata.implied"

// searchFlags opens a directory on a walk's way: O_PATH needs only search
// permission, as the path's resolution does.
const searchFlags = unix.O_PATH

// openat2Tries bounds the retries of an openat2 that answered EAGAIN (a
// rename raced the resolution; the call may be repeated).
const openat2Tries = 16

// openat2 opens rel below dirfd, never outside it and through no link.
func openat2(dirfd int, rel string, flags int, perm uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(perm) // NB: openat2 refuses a mode without O_CREAT
	}
	var err error
	for range openat2Tries {
		var fd int
		if fd, err = unix.Openat2(dirfd, rel, &how); err != unix.EAGAIN {
			return fd, err
		}
	}
	return -1, err
}

// isImplied reports whether the directory dir is implied; on a file system
// without user extended attributes none is.
func isImplied(dir *os.File) (bool, error) {
	_, err := unix.Fgetxattr(int(dir.Fd()), impliedAttr, nil)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENODATA), noXattrs(err):
		return false, nil
	}
	return false, &fs.PathError{Op: "getxattr", Path: dir.Name(), Err: err}
}

// setImplied marks dir implied; on a file system without user extended
// attributes it does nothing, and dir stays a marker.
func setImplied(dir *os.File) error {
	err := unix.Fsetxattr(int(dir.Fd()), impliedAttr, []byte{1}, 0)
	if err != nil && !noXattrs(err) {
		return &fs.PathError{Op: "setxattr", Path: dir.Name(), Err: err}
	}
	return nil
}

func clearImplied(dir *os.File) error {
	err := unix.Fremovexattr(int(dir.Fd()), impliedAttr)
	if err != nil && !errors.Is(err, unix.ENODATA) && !noXattrs(err) {
		return &fs.PathError{Op: "removexattr", Path: dir.Name(), Err: err}
	}
	return nil
}

// noXattrs reports whether err says the file system keeps no user
// extended attributes.
func noXattrs(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
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

// renameNoReplaceAt renames from in fromDir to to in toDir unless to exists
// (fs.ErrExist then). errNoReplace says the file system cannot do it.
func renameNoReplaceAt(fromDir *os.File, from string, toDir *os.File, to string) error {
	err := retryEINTR(func() error {
		return unix.Renameat2(int(fromDir.Fd()), from, int(toDir.Fd()), to, unix.RENAME_NOREPLACE)
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return errNoReplace
	}
	return &os.LinkError{Op: "renameat2", Old: join(fromDir, from), New: join(toDir, to), Err: err}
}
