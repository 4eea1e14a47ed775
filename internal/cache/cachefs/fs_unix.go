//go:build unix

package cachefs

import (
	"os"
	"syscall"
)

// NB: every file is opened with O_NOFOLLOW: a link where the cache keeps a
// data file or a sidecar would take its reads and writes outside the cache.
//
// NB: os.OpenFile tries to register every file with the network poller,
// which costs regular files a failed epoll_ctl and several fcntl calls. The
// cache opens a file per read and one per sidecar at Open, so it opens with
// open(2) itself and wraps the descriptor with os.NewFile (one fcntl).

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	fd, err := openFd(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{os.NewFile(uintptr(fd), name)}, nil
}

func openFd(name string, flag int, perm os.FileMode) (int, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, uint32(perm.Perm()))
		if err == nil {
			return fd, nil
		}
		if err != syscall.EINTR {
			return -1, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
}

// ReadFile reads a small file in three system calls (open, pread, close);
// os.ReadFile also stats it and reads again to see the end.
func (osFS) ReadFile(name string) ([]byte, error) {
	fd, err := openFd(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 4096)
	n := 0
	for {
		m, err := syscall.Pread(fd, buf[n:], int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		case m == 0 || n+m < len(buf):
			return buf[:n+m], nil
		}
		n += m
		buf = append(buf, make([]byte, len(buf))...)
	}
}

// Available implements Spacer with statfs(2).
func (osFS) Available(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
