//go:build unix

package cache

import (
	"fmt"
	"os"
	"syscall"
)

// owner is the user whose the cache's directories must be: the worker's.
var owner = os.Geteuid

// claimRoot makes sure the cache's directory at root is the worker's own
// and closes it to others (dirMode). It must be no symbolic link: the
// cache makes it inside a directory that the operator names, and someone
// who may write there could point a link of that name anywhere the
// worker's user may write (a worker running as root: anywhere), and have
// the cache chmod it and fill it. And it must be the worker's user's: a
// directory another user made there is that user's to fill with links.
func claimRoot(root string) error {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if fi, lerr := os.Lstat(root); err != nil && lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: the cache keeps its files in a directory of its own, never through a link", root)
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "fstat", Path: root, Err: err}
	}
	if int(st.Uid) != owner() {
		return fmt.Errorf("%s is owned by uid %d, not by this worker's user (uid %d): remove it, or run the worker as its owner", root, st.Uid, owner())
	}
	if err := syscall.Fchmod(fd, dirMode); err != nil {
		return &os.PathError{Op: "chmod", Path: root, Err: err}
	}
	return nil
}
