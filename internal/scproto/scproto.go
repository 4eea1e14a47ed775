// Package scproto frames the messages of the short-circuit protocol between
// a client and a worker on the same host: each message is a uvarint length
// and a protobuf body, sent in one datagram-like write so that a file
// descriptor can travel with it (SCM_RIGHTS). It knows nothing of caches.
package scproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"

	"google.golang.org/protobuf/proto"
)

// MaxMessage bounds a message's size.
const MaxMessage = 1 << 20

// Write sends m with the control message oob (nil for none).
func Write(conn *net.UnixConn, m proto.Message, oob []byte) error {
	body, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	msg := binary.AppendUvarint(make([]byte, 0, len(body)+binary.MaxVarintLen32), uint64(len(body)))
	msg = append(msg, body...)
	n, oobn, err := conn.WriteMsgUnix(msg, oob, nil)
	if err == nil && (n != len(msg) || oobn != len(oob)) {
		err = fmt.Errorf("scproto: short write %d/%d", n, len(msg))
	}
	return err
}

// Read receives one message into m, discarding any file descriptor.
func Read(conn *net.UnixConn, m proto.Message) error {
	fd, err := ReadFD(conn, m)
	if fd >= 0 {
		syscall.Close(fd)
	}
	return err
}

// ReadFD receives one message into m and returns the file descriptor that
// came with it, or -1. The caller owns the descriptor.
func ReadFD(conn *net.UnixConn, m proto.Message) (int, error) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return -1, err
	}
	fd := -1
	if oobn > 0 {
		if fd, err = parseFD(oob[:oobn]); err != nil {
			return -1, err
		}
	}
	if err := decode(buf[:n], m); err != nil {
		closeFD(fd)
		return -1, err
	}
	return fd, nil
}

// decode parses one message as Write frames it.
func decode(msg []byte, m proto.Message) error {
	size, k := binary.Uvarint(msg)
	if k <= 0 || uint64(len(msg)-k) != size {
		return errors.New("scproto: malformed message")
	}
	return proto.Unmarshal(msg[k:], m)
}

// bufs holds receive buffers: a message may be up to MaxMessage long, and
// allocating (and zeroing) that much per message cost more CPU than the
// rest of a short-circuit read's bookkeeping.
var bufs = sync.Pool{New: func() any { b := make([]byte, MaxMessage+binary.MaxVarintLen32); return &b }}

func parseFD(oob []byte) (int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("scproto: bad control message: %v", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return -1, fmt.Errorf("scproto: expected one descriptor: %v", err)
	}
	return fds[0], nil
}

func closeFD(fd int) {
	if fd >= 0 {
		syscall.Close(fd)
	}
}
