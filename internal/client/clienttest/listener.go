package clienttest

import (
	"fmt"
	"net"
	"time"
)

func newSwitchListener() (*switchListener, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &switchListener{addr: lis.Addr().String(), conns: make(chan net.Conn), done: make(chan struct{})}
	l.mu.lis = lis
	l.mu.changed = make(chan struct{})
	go l.acceptLoop(lis)
	return l, nil
}

// acceptLoop accepts lis's connections until lis closes: those that come
// while the member is down it closes at once, the others it hands to
// Accept.
func (l *switchListener) acceptLoop(lis net.Listener) {
	for {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		if l.mu.down || l.mu.closed {
			c.Close()
			l.mu.tried++
			close(l.mu.changed)
			l.mu.changed = make(chan struct{})
			l.mu.Unlock()
			continue
		}
		l.mu.open = append(l.mu.open, c)
		l.mu.Unlock()
		select {
		case l.conns <- c:
		case <-l.done:
			c.Close()
			return
		}
	}
}

// Accept implements net.Listener.
func (l *switchListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Addr implements net.Listener.
func (l *switchListener) Addr() net.Addr {
	a, _ := net.ResolveTCPAddr("tcp", l.addr)
	return a
}

// Close implements net.Listener: for good.
func (l *switchListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	l.mu.closed = true
	close(l.done)
	l.closeConnsLocked()
	if l.mu.lis != nil {
		return l.mu.lis.Close()
	}
	return nil
}

// dropConns closes every connection handed out: the member's clients see
// their calls fail, as when a member's process dies.
func (l *switchListener) dropConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closeConnsLocked()
}

func (l *switchListener) closeConnsLocked() {
	for _, c := range l.mu.open {
		c.Close()
	}
	l.mu.open = nil
}

// goDown closes the connections and takes each new one only to close it.
func (l *switchListener) goDown() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.down, l.mu.tried = true, 0
	l.closeConnsLocked()
}

// refuse closes the connections and the port: connections are refused.
func (l *switchListener) refuse() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closeConnsLocked()
	if l.mu.lis == nil {
		return nil
	}
	err := l.mu.lis.Close()
	l.mu.lis = nil
	return err
}

// up serves again, on the same port if it was refusing.
func (l *switchListener) up() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.down = false
	if l.mu.lis != nil {
		return nil
	}
	lis, err := net.Listen("tcp", l.addr)
	if err != nil {
		return fmt.Errorf("listen again on %s: %w", l.addr, err)
	}
	l.mu.lis = lis
	go l.acceptLoop(lis)
	return nil
}

// awaitTried waits until n connections came while down, for at most
// bound (a bound for a broken test, not a synchronisation).
func (l *switchListener) awaitTried(n int, bound time.Duration) error {
	timeout := time.After(bound)
	for {
		l.mu.Lock()
		tried, changed := l.mu.tried, l.mu.changed
		l.mu.Unlock()
		if tried >= n {
			return nil
		}
		select {
		case <-changed:
		case <-timeout:
			return fmt.Errorf("%d connections came while down within %v, want %d", tried, bound, n)
		}
	}
}
