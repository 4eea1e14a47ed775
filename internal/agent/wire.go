package agent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxRequest bounds a request frame: requests carry names and numbers,
// never data, so anything larger is not a caller of ours.
const MaxRequest = 1 << 20

// MaxShared bounds the shared region a connection may bring.
const MaxShared = 256 << 20

// errFrame is a frame the agent refuses; the connection is closed.
var errFrame = errors.New("agent: malformed frame")

// readFrame reads one frame's JSON from r into buf (grown as needed) and
// returns it.
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > MaxRequest {
		return nil, fmt.Errorf("%w: a frame of %d bytes (at most %d)", errFrame, n, MaxRequest)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// appendFrame appends a frame holding body to dst.
func appendFrame(dst, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}

// readHello reads the connection's first frame with the descriptor that
// must come with it. It returns the frame, the descriptor (-1 if none came;
// any others are closed) and what was read past the frame.
func readHello(c *net.UnixConn) (frame []byte, fd int, rest []byte, err error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, -1, nil, err
	}
	fd = -1
	if msgs, perr := syscall.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for _, m := range msgs {
			fds, _ := syscall.ParseUnixRights(&m)
			for _, f := range fds {
				if fd < 0 {
					fd = f
				} else {
					syscall.Close(f)
				}
			}
		}
	}
	r := io.MultiReader(&sliceReader{b: buf[:n]}, c)
	frame, err = readFrame(r, nil)
	if err != nil {
		closeFD(fd)
		return nil, -1, nil, err
	}
	used := min(4+len(frame), n)
	return frame, fd, append([]byte(nil), buf[used:n]...), nil
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

func closeFD(fd int) {
	if fd >= 0 {
		syscall.Close(fd)
	}
}

// shared is a connection's region of memory shared with its caller.
type shared struct{ b []byte }

// mapShared maps the caller's memfd, which must be sealed against
// shrinking and growing and hold at most MaxShared bytes. It closes fd.
func mapShared(fd int) (*shared, error) {
	if fd < 0 {
		return nil, errors.New("the hello brought no shared memory descriptor")
	}
	defer syscall.Close(fd)
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("the shared memory descriptor is not a memfd: %v", err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 || seals&unix.F_SEAL_GROW == 0 {
		return nil, errors.New("the shared memory must be sealed against shrinking and growing (F_SEAL_SHRINK|F_SEAL_GROW)")
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size <= 0 || st.Size > MaxShared {
		return nil, fmt.Errorf("shared memory of %d bytes: it must hold 1 to %d", st.Size, MaxShared)
	}
	b, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping the shared memory: %v", err)
	}
	return &shared{b: b}, nil
}

// span returns the region's bytes [off, off+n), or an error naming the
// range if it does not lie inside.
func (s *shared) span(off, n int64) ([]byte, error) {
	if s == nil || off < 0 || n < 0 || off > int64(len(s.b)) || n > int64(len(s.b))-off {
		size := 0
		if s != nil {
			size = len(s.b)
		}
		return nil, fmt.Errorf("%w: bytes [%d, %d) are not inside the shared memory of %d bytes", errArg, off, off+n, size)
	}
	return s.b[off : off+n : off+n], nil
}

func (s *shared) unmap() {
	if s != nil && s.b != nil {
		_ = syscall.Munmap(s.b)
		s.b = nil
	}
}

// peerCred returns the user id and process id of the process at the other
// end of c.
func peerCred(c *net.UnixConn) (uid uint32, pid int32, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if cerr != nil {
		return 0, 0, cerr
	}
	return cred.Uid, cred.Pid, nil
}
