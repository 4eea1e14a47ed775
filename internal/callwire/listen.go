package callwire

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Split serves the callwire connections of lis with s, and returns the
// listener of the others, for gRPC: each connection is told apart by its
// first bytes (docs above). Closing the returned listener closes lis and
// stops the split; connections already handed to s stay until s.Close.
func (s *Server) Split(lis net.Listener) net.Listener {
	l := &splitListener{Listener: lis, s: s, conns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

// splitListener is the listener that Split returns.
type splitListener struct {
	net.Listener
	s     *Server
	conns chan net.Conn // gRPC's connections
	done  chan struct{} // closed by Close

	mu        sync.Mutex
	acceptErr error // lis's error that ended the accept loop
	closeOnce sync.Once
}

// acceptLoop accepts lis's connections until it fails, and sorts each in a
// goroutine of its own: a client slow to send its first bytes holds up no
// other.
func (l *splitListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.mu.Lock()
			l.acceptErr = err
			l.mu.Unlock()
			l.Close()
			return
		}
		go l.sort(c)
	}
}

// sort reads c's first byte, and the rest of a callwire preface if that is
// what it starts, and hands c to s or to gRPC.
func (l *splitListener) sort(c net.Conn) {
	if err := c.SetDeadline(time.Now().Add(handshakeTimeout)); err != nil {
		c.Close()
		return
	}
	var p [prefaceLen]byte
	if _, err := io.ReadFull(c, p[:1]); err != nil {
		c.Close()
		return
	}
	if p[0] != prefaceStem[0] {
		if err := c.SetDeadline(time.Time{}); err != nil {
			c.Close()
			return
		}
		select {
		case l.conns <- &prefixConn{Conn: c, prefix: []byte{p[0]}}:
		case <-l.done:
			c.Close()
		}
		return
	}
	if _, err := io.ReadFull(c, p[1:]); err != nil || string(p[:len(prefaceStem)]) != prefaceStem {
		c.Close()
		return
	}
	l.s.serveConn(c, string(p[:]))
}

// Accept returns the next connection for gRPC.
func (l *splitListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.acceptErr != nil {
			return nil, l.acceptErr
		}
		return nil, net.ErrClosed
	}
}

// Close closes lis; Accept fails from then on.
func (l *splitListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// prefixConn is a connection whose first bytes were read already: prefix.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
