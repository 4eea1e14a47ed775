package linkproxy

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"

	"github.com/stratafs/strata/internal/object/throttle"
)

// Stats are a proxy's counters since it started.
type Stats struct {
	Down  int64 `json:"down_bytes"`  // from the target to clients (a bucket's responses)
	Up    int64 `json:"up_bytes"`    // from clients to the target (requests, uploads)
	Conns int64 `json:"connections"` // connections accepted
	Open  int64 `json:"open"`        // connections open now

	// Bandwidth is the limit each way in bytes per second, 0 for none.
	Bandwidth float64 `json:"bandwidth"`
}

// Proxy forwards every connection accepted on its listener to the target,
// across its link. Its methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string
	link   *throttle.Link
	ctx    context.Context // ends at Close: stops the limiter's waits
	cancel context.CancelFunc

	down, up, conns atomic.Int64
	bandwidth       atomic.Uint64 // math.Float64bits of Stats.Bandwidth
	handlers        sync.WaitGroup

	mu struct {
		sync.Mutex
		open   map[net.Conn]struct{} // both ends of every open connection
		closed bool
	}
}

// Listen starts a proxy on addr ("127.0.0.1:0" for any port) to target,
// limited to bandwidth bytes per second each way (0: unlimited). Call Serve
// to accept connections, Close to stop.
func Listen(addr, target string, bandwidth float64) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, link: throttle.NewLink(throttle.Config{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.mu.open = make(map[net.Conn]struct{})
	p.SetBandwidth(bandwidth)
	return p, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetBandwidth changes the limit, each way, in bytes per second (0 or
// less: unlimited), for the connections already open too.
func (p *Proxy) SetBandwidth(bytesPerSec float64) {
	bytesPerSec = max(bytesPerSec, 0)
	p.link.Set(throttle.Config{Read: bytesPerSec, Write: bytesPerSec})
	p.bandwidth.Store(math.Float64bits(bytesPerSec))
}

// Stats returns the proxy's counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open := int64(len(p.mu.open) / 2)
	p.mu.Unlock()
	return Stats{Down: p.down.Load(), Up: p.up.Load(), Conns: p.conns.Load(), Open: open,
		Bandwidth: math.Float64frombits(p.bandwidth.Load())}
}

// Serve accepts connections until Close; it returns nil after Close.
func (p *Proxy) Serve() error {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		p.conns.Add(1)
		p.handlers.Add(1)
		go p.handle(c)
	}
}

// Close stops accepting, closes every open connection and waits for their
// handlers to end. Closing again does nothing.
func (p *Proxy) Close() error {
	p.cancel()
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		return nil
	}
	p.mu.closed = true
	err := p.ln.Close()
	for c := range p.mu.open {
		c.Close()
	}
	p.mu.Unlock()
	p.handlers.Wait()
	return err
}

// handle connects client to the target and moves bytes both ways until
// both directions have ended.
func (p *Proxy) handle(client net.Conn) {
	defer p.handlers.Done()
	defer client.Close()
	var d net.Dialer
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		return // the client sees its connection closed, as with a dead target
	}
	defer server.Close()
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(server, p.link.ShapeWrite(p.ctx, client), &p.up) })
	p.pipe(client, p.link.ShapeRead(p.ctx, server), &p.down)
	wg.Wait()
}

// track records an open connection's two ends, so that Close can end them;
// false if the proxy is closed already.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return false
	}
	p.mu.open[a], p.mu.open[b] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) untrack(a, b net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.open, a)
	delete(p.mu.open, b)
}

// pipe copies src to dst, counting, then half-closes dst so that its reader
// sees the end of the stream while the other direction goes on (a client
// that shuts its side down still gets the answer).
func (p *Proxy) pipe(dst net.Conn, src io.Reader, n *atomic.Int64) {
	_, err := io.Copy(counter{dst, n}, src)
	if tc, ok := dst.(*net.TCPConn); ok && err == nil {
		_ = tc.CloseWrite()
		return
	}
	// A broken direction ends the whole connection.
	dst.Close()
}

// counter adds what it writes to n.
type counter struct {
	w io.Writer
	n *atomic.Int64
}

func (c counter) Write(b []byte) (int, error) {
	k, err := c.w.Write(b)
	c.n.Add(int64(k))
	return k, err
}
