//go:build linux && (amd64 || arm64)

package databench

import (
	"os"
	"syscall"
	"unsafe"
)

// fadvDontNeed is POSIX_FADV_DONTNEED on Linux.
const fadvDontNeed = 4

// canDropPageCache reports whether dropPageCache and residentBytes work
// here.
const canDropPageCache = true

// dropPageCache asks the kernel to drop path's clean pages from the page
// cache (posix_fadvise DONTNEED over the whole file). It needs no
// privilege, touches no other file, and leaves dirty pages alone: callers
// fsync first.
func dropPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// NB: on amd64 and arm64 fadvise64 takes (fd, offset, len, advice); a
	// zero length means to the end of the file.
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		return &os.PathError{Op: "fadvise", Path: path, Err: errno}
	}
	return nil
}

// residentBytes returns how many bytes of path's pages are in the page
// cache, and its size (mincore over a read-only mapping, which reads
// nothing).
func residentBytes(path string) (resident, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, 0, err
	}
	size = st.Size()
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, 0, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	defer syscall.Munmap(m)
	ps := int64(os.Getpagesize())
	vec := make([]byte, (size+ps-1)/ps)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return 0, 0, &os.PathError{Op: "mincore", Path: path, Err: errno}
	}
	for i, v := range vec {
		if v&1 != 0 {
			resident += min(ps, size-int64(i)*ps)
		}
	}
	return resident, size, nil
}
