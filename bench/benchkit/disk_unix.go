//go:build unix

package benchkit

import "syscall"

// DiskFree returns the bytes available to this user on dir's file system
// and the file system's type number, 0, 0 if unknown.
func DiskFree(dir string) (free uint64, fsType int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0
	}
	return st.Bavail * uint64(st.Bsize), int64(st.Type)
}
