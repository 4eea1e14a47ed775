package callwire

import (
	"context"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A member cut off by the network answers nothing, not even a reset: a
// call sent to it waited for its deadline, and the next call went to the
// same member, the client's leader, so a client whose leader was
// partitioned away got no answer for as long as the partition lasted
// (internal/testhosts' TestPartitions found it). So the connections to the
// service give up on a silent peer after SilentPeerTimeout, as a member
// that refuses a connection does at once: data unacknowledged that long
// (TCP_USER_TIMEOUT), or keepalive probes of an idle connection (one
// awaiting an answer) unanswered that long, fail the connection, and the
// call with UNAVAILABLE, which the clients' retry layer takes to the next
// member. A peer that is alive but slow to answer acknowledges both, so it
// costs nothing there.
const SilentPeerTimeout = 5 * time.Second

// dialTimeout bounds a connection's TCP handshake: a member cut off never
// answers the SYN, which the kernel retries for two minutes.
const dialTimeout = 3 * time.Second

// DialTCP connects to addr over TCP as the connections to the service do,
// giving up on a silent peer (SilentPeerTimeout); it suits
// grpc.WithContextDialer.
func DialTCP(ctx context.Context, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	d := net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second,
			Count: int(SilentPeerTimeout / time.Second)},
		Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT,
					int(SilentPeerTimeout/time.Millisecond))
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	return d.DialContext(ctx, "tcp", addr)
}
