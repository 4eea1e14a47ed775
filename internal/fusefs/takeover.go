package fusefs

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// Serving a connection that outlives its server: the process that mounts
// (cmd/strata's supervisor) keeps the /dev/fuse descriptor and the INIT
// request the kernel sent on it, and hands both to each serving process
// it starts. go-fuse's server begins by reading INIT, which the kernel
// sends once per connection; so a server is started on one end of a
// socket pair that holds a copy of INIT, and once it answered, the
// /dev/fuse descriptor is put in the place of that end (dup3): the
// server reads the kernel's requests from then on, none the wiser. The
// first server's answer to INIT goes to the kernel; a successor's is
// dropped (the kernel has had its answer), and the successor asks the
// kernel to send again every request its predecessor read and never
// answered (FUSE_NOTIFY_RESEND, Linux 6.9 and later), so that a process
// killed in the middle of a read leaves no caller waiting for ever.

// notifyResend is FUSE_NOTIFY_RESEND. A notification is an out header
// with unique 0 and the code, positive, in its error field (the kernel
// takes a negative one for no code at all and refuses it, EINVAL).
const notifyResend = 7

// Serve serves fs on the FUSE connection fd, whose INIT request was
// initReq, and returns the running server. first: the kernel awaits the
// answer to INIT. fd is the caller's still (it may close it once Serve
// returned; the server has its own).
func Serve(fs *FS, fd int, initReq []byte, first bool, mo fuse.MountOptions) (*fuse.Server, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	ours := os.NewFile(uintptr(pair[1]), "init")
	defer ours.Close()
	if _, err := ours.Write(initReq); err != nil {
		unix.Close(pair[0])
		return nil, fmt.Errorf("handing INIT over: %w", err)
	}
	srv, err := fuse.NewServer(fs, fmt.Sprintf("/dev/fd/%d", pair[0]), &mo)
	if err != nil {
		return nil, fmt.Errorf("INIT: %w", err)
	}
	reply := make([]byte, 4096)
	n, err := ours.Read(reply)
	if err != nil {
		return nil, fmt.Errorf("the answer to INIT: %w", err)
	}
	if first {
		if _, err := unix.Write(fd, reply[:n]); err != nil {
			return nil, fmt.Errorf("answering INIT: %w", err)
		}
	}
	if err := unix.Dup3(fd, pair[0], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("dup3: %w", err)
	}
	if !first {
		if err := askResend(pair[0]); err != nil {
			fs.opt.Log.Warn("the kernel would not send again the requests a predecessor left unanswered: their callers wait until the mount is aborted", "err", err)
		}
	}
	go srv.Serve()
	return srv, nil
}

// askResend asks the kernel to send again the requests read from the
// connection and not answered. An older kernel refuses: those requests'
// callers then wait until the mount is aborted (strata umount does), and
// the error says so.
func askResend(fd int) error {
	var h [16]byte
	binary.LittleEndian.PutUint32(h[0:], 16)
	binary.LittleEndian.PutUint32(h[4:], notifyResend)
	_, err := unix.Write(fd, h[:])
	return err
}

// ReadInit reads the INIT request the kernel sends first on a new FUSE
// connection fd.
func ReadInit(fd int) ([]byte, error) {
	buf := make([]byte, 1<<20+64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading INIT from /dev/fuse: %w", err)
		}
		if n < 40 || binary.LittleEndian.Uint32(buf[4:]) != 26 { // FUSE_INIT
			return nil, fmt.Errorf("the kernel's first request is not INIT (%d bytes)", n)
		}
		return append([]byte(nil), buf[:n]...), nil
	}
}
