package callwire

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxIdle is the most idle connections a pool keeps; more callers at once
// dial more, closed as they come back.
const maxIdle = 64

// PoolIdleTimeout is how long a pool keeps a connection no call took: a
// burst of callers leaves as many connections as it had callers at once, and
// those the calls after it do not need go. Well under the server's
// IdleTimeout, so that no call takes a connection the server closed as idle.
const PoolIdleTimeout = time.Minute

// Pool makes calls to one server from any number of goroutines: each call
// takes an idle connection, or dials one, and gives it back after the
// answer unless the connection failed. It has the shape of gRPC's Invoke,
// so that a client can send its unary calls through it instead of a
// grpc.ClientConn; it does not retry.
//
// Safe for concurrent use.
type Pool struct {
	addr  string
	tls   *tls.Config
	token string
	now   func() time.Time // time.Now; tests move it

	mu struct {
		sync.Mutex
		idle   []idleConn // the last given back on top
		closed bool
	}
}

// idleConn is a connection in the pool, and since when.
type idleConn struct {
	c     *Conn
	since time.Time
}

// NewPool returns a pool of connections to addr, over TLS with tlsConfig
// (nil: plaintext), whose calls carry token (empty: none). Nothing is
// dialled until a call.
func NewPool(addr string, tlsConfig *tls.Config, token string) *Pool {
	return &Pool{addr: addr, tls: tlsConfig, token: token, now: time.Now}
}

// errClosed is the failure of a call made after Close.
var errClosed = status.Error(codes.Canceled, "callwire: the pool is closed")

// Invoke calls method with args and decodes the answer into reply, as
// Conn.Invoke does. A connection that cannot be made fails the call as
// UNAVAILABLE. The call options are gRPC's; none applies.
func (p *Pool) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	req, ok1 := args.(proto.Message)
	resp, ok2 := reply.(proto.Message)
	if !ok1 || !ok2 {
		return status.Errorf(codes.Internal, "callwire: %s: %T and %T are not protobuf messages", method, args, reply)
	}
	c, err := p.take(ctx)
	if err != nil {
		return err
	}
	err = c.Invoke(ctx, method, req, resp)
	p.give(c)
	return err
}

// take returns an idle connection, or a new one.
func (p *Pool) take(ctx context.Context) (*Conn, error) {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	p.expireLocked()
	if n := len(p.mu.idle); n > 0 {
		c := p.mu.idle[n-1].c
		p.mu.idle = p.mu.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := Dial(ctx, p.addr, p.tls, p.token)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, status.Errorf(codes.Unavailable, "callwire: %v", err)
	}
	return c, nil
}

// expireLocked closes the connections idle for PoolIdleTimeout: the oldest,
// at the bottom.
func (p *Pool) expireLocked() {
	now := p.now()
	n := 0
	for n < len(p.mu.idle) && now.Sub(p.mu.idle[n].since) >= PoolIdleTimeout {
		p.mu.idle[n].c.Close()
		n++
	}
	if n > 0 {
		p.mu.idle = slices.Delete(p.mu.idle, 0, n)
	}
}

// give puts c back among the idle, unless it failed or there are enough.
// A connection that failed takes the idle ones with it: the server went away
// or restarted, and each would fail a call of its own.
func (p *Pool) give(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.failed {
		c.Close()
		p.closeIdleLocked()
		return
	}
	if p.mu.closed || len(p.mu.idle) >= maxIdle {
		c.Close()
		return
	}
	p.mu.idle = append(p.mu.idle, idleConn{c, p.now()})
}

// Close closes the idle connections; those in calls close as they come
// back. Calls made later fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.closed = true
	p.closeIdleLocked()
	return nil
}

func (p *Pool) closeIdleLocked() {
	for _, i := range p.mu.idle {
		i.c.Close()
	}
	p.mu.idle = nil
}
