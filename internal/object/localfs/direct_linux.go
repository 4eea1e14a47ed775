package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// errDirectRefused is what a write answers on a file system that took
// O_DIRECT at fcntl but refuses the I/O.
var errDirectRefused = unix.EINVAL

// setDirect turns O_DIRECT on or off for f's later reads and writes; a file
// system without it refuses (EINVAL).
func setDirect(f *os.File, on bool) error {
	fd := int(f.Fd())
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if on {
		flags |= unix.O_DIRECT
	} else {
		flags &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags)
	return err
}
