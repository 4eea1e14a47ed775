package loopback

import (
	"net"
	"sync/atomic"
)

// Outage is a loopback listener for a server that is down, keeping its
// address, until Up: it accepts each connection and closes it at once (a
// failed connection attempt, as a refused one is, but one a test can count
// on Attempts), and once up hands connections to whatever serves on it. It
// lets a test take a server down for as many of a client's connection
// attempts as it likes, without a clock.
type Outage struct {
	net.Listener
	up       atomic.Bool
	attempts chan struct{}
}

// NewOutage listens on a free loopback port, down.
func NewOutage() (*Outage, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &Outage{Listener: l, attempts: make(chan struct{}, 1024)}, nil
}

// Attempts receives a value for each connection refused while down (up to
// 1024 not yet received).
func (o *Outage) Attempts() <-chan struct{} { return o.attempts }

// Up ends the outage: connections from now on are served.
func (o *Outage) Up() { o.up.Store(true) }

// Accept implements net.Listener.
func (o *Outage) Accept() (net.Conn, error) {
	for {
		c, err := o.Listener.Accept()
		if err != nil || o.up.Load() {
			return c, err
		}
		c.Close()
		select {
		case o.attempts <- struct{}{}:
		default:
		}
	}
}
