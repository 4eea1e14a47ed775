package cachefs

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// datasync flushes the file's data and the metadata needed to read it back
// (its size), not its timestamps.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := rc.Control(func(fd uintptr) {
		for {
			if err = syscall.Fdatasync(int(fd)); err != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// Allocate is fallocate(2) with FALLOC_FL_KEEP_SIZE.
func (f osFile) Allocate(n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, n)
		if err == nil {
			return nil
		}
		if err != syscall.EINTR {
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
	}
}
