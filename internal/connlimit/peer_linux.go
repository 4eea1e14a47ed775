package connlimit

import (
	"net"
	"strconv"
	"syscall"
)

// PeerUser is the user of the process at the other end of a Unix socket
// connection ("uid 1000"), from the kernel (SO_PEERCRED): a Config.Key for
// a socket that any local user may reach. "" for any other connection.
func PeerUser(c net.Conn) string {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return ""
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return ""
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return ""
	}
	return "uid " + strconv.FormatUint(uint64(cred.Uid), 10)
}
