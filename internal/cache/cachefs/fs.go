// Package cachefs is the file-system seam of the block cache: the few file
// operations the cache performs, behind an interface, so that tests can
// inject the failures real disks produce (ENOSPC from a disk shared with
// others, EIO) through the same calls as real I/O (STYLE rule 10).
//
// It is not a general virtual file system: there is no in-memory
// implementation, because the cache hands open descriptors of its files to
// other processes (short-circuit reads) and so needs real files. OS is the
// implementation; Faulty wraps any FS to inject faults and to simulate a
// disk smaller than the space the cache was told it may use.
package cachefs

import (
	"io"
	"os"
)

// FS is the file system the cache keeps its files in.
//
// Methods are safe for concurrent use. Errors are those of package os
// (*os.PathError and friends), so errors.Is(err, fs.ErrNotExist) and
// errors.Is(err, syscall.ENOSPC) work on them; implementations must keep
// them that way, since the cache decides on them.
type FS interface {
	// OpenFile opens a file as os.OpenFile does, but never through a
	// symbolic link at name itself (O_NOFOLLOW: ELOOP).
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// ReadFile returns a whole file's contents; a link at name is refused,
	// as OpenFile refuses it.
	ReadFile(name string) ([]byte, error)
	// ReadDirNames returns the names in a directory, in no particular order.
	ReadDirNames(name string) ([]string, error)
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(name string, perm os.FileMode) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename replaces newname with oldname atomically.
	Rename(oldname, newname string) error
}

// File is an open file.
//
// ReadAt and WriteAt may be called concurrently, as on *os.File; Close must
// not race with them.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes the file's data durable (fdatasync where there is one:
	// the cache needs the data, not the timestamps).
	Sync() error
	// Fd is the operating-system descriptor, valid until Close: a worker
	// passes it to a client on the same host for short-circuit reads.
	Fd() uintptr
	// Name is the name the file was opened with.
	Name() string
	// Allocate reserves n bytes of disk for the file from offset 0 without
	// changing its size, so that writes within them (by the cache, or by
	// a writer it handed the file to) do not fail for want of space.
	Allocate(n int64) error
	// Truncate sets the file's size, freeing what is allocated past it.
	Truncate(size int64) error
	// Stat describes the file, as os.File's does.
	Stat() (os.FileInfo, error)
}

// OS returns the operating system's file system.
func OS() FS { return osFS{} }

type osFS struct{}

func (osFS) ReadDirNames(name string) ([]string, error) {
	d, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }

// osFile is an *os.File whose Sync is fdatasync.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }
