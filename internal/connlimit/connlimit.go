// Package connlimit bounds what the connections a server accepts may hold
// of it: how many are open at once, in all and from one remote address (on
// a Unix socket, from one local user), and how long a connection may stay
// open before it makes its first authenticated call. A connection over a
// cap is closed as it is accepted; one whose first authenticated call does
// not come in time is closed then. Refusals and closings are logged at most
// once a minute each, with how many there were.
//
// The server says what "authenticated" means: it calls Authenticated with a
// call's context once the call passed its checks (a token it signed, a
// member's certificate, a block token). A gRPC call's context leads to its
// connection by its peer's addresses; servers of other protocols (callwire,
// the short-circuit socket) put the connection in their calls' contexts
// with NewContext.
//
// It is not a rate limiter of calls, nor authentication: a connection that
// authenticated may make any number of calls, and it is the server's checks
// of each call that decide what the call may do.
package connlimit

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/stratafs/strata/internal/logevery"
)

// The defaults of Config's bounds (docs/security.md, "Connections"). NB:
// DefaultMaxPerAddr leaves room for a busy client host: a Java client of
// 64 threads opens up to 64 callwire connections to a member, besides its
// gRPC ones, and a host may run several.
const (
	DefaultMaxConns   = 8192
	DefaultMaxPerAddr = 1024
	DefaultFirstCall  = 20 * time.Second
)

// logEvery is how often a Listener logs refusals, and closings at the
// first-call deadline, at most.
const logEvery = time.Minute

// Config bounds the connections of a Listener.
type Config struct {
	// MaxConns bounds the connections open at once; MaxPerAddr those from
	// one remote address (Key). 0 means the default, a negative value no
	// bound.
	MaxConns, MaxPerAddr int
	// FirstCall is how long a connection may stay open before its first
	// authenticated call. 0 means DefaultFirstCall, a negative value no
	// deadline.
	FirstCall time.Duration
	// Key names the remote address a connection counts against for
	// MaxPerAddr: nil means RemoteIP. A connection whose key is "" counts
	// against MaxConns only.
	Key func(net.Conn) string
	// Name is what the log lines call the port ("the namespace service").
	Name string
	// Log is where refusals and closings are logged; nil means
	// slog.Default().
	Log *slog.Logger
}

func (c *Config) setDefaults() {
	c.MaxConns = orDefault(c.MaxConns, DefaultMaxConns)
	c.MaxPerAddr = orDefault(c.MaxPerAddr, DefaultMaxPerAddr)
	if c.FirstCall == 0 {
		c.FirstCall = DefaultFirstCall
	}
	if c.Key == nil {
		c.Key = RemoteIP
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// Stats are a Listener's counters.
type Stats struct {
	// Open is the connections open now; Authenticated those of them that
	// made an authenticated call.
	Open, Authenticated int
	// Refused counts the connections closed as they were accepted, over a
	// cap; Expired those closed at the first-call deadline.
	Refused, Expired uint64
}

// Listener is a net.Listener whose Accept returns only the connections
// within Config's caps, each closed at the first-call deadline unless it
// made an authenticated call by then.
//
// Safe for concurrent use.
type Listener struct {
	net.Listener
	cfg                    Config
	refused, expired       atomic.Uint64
	authenticated          atomic.Int64
	refusedLog, expiredLog logevery.Limiter

	mu struct {
		sync.Mutex
		open  int
		byKey map[string]int
	}
}

// Listen returns lis bounded by cfg.
func Listen(lis net.Listener, cfg Config) *Listener {
	cfg.setDefaults()
	l := &Listener{Listener: lis, cfg: cfg}
	l.refusedLog.Every, l.expiredLog.Every = logEvery, logEvery
	l.mu.byKey = map[string]int{}
	return l
}

// Accept returns the next connection within the caps; those over a cap
// are closed meanwhile.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit returns nc counted and tracked, or closes it and returns nil if
// it is over a cap.
func (l *Listener) admit(nc net.Conn) *conn {
	c := &conn{Conn: nc, l: l, key: l.cfg.Key(nc)}
	c.ends, c.tcp = endsOf(nc.LocalAddr(), nc.RemoteAddr())
	if over, open, fromKey := l.count(c); over != "" {
		l.refused.Add(1) // NB: before the close, which the client may see at once
		nc.Close()
		if n, ok := l.refusedLog.Allow(time.Now()); ok {
			l.cfg.Log.Warn("connections refused: over the cap of open connections", "port", l.cfg.Name, "cap", over,
				"from", c.key, "open", open, "open_from_it", fromKey, "max_conns", l.cfg.MaxConns,
				"max_conns_per_addr", l.cfg.MaxPerAddr, "refused_since_last_line", n)
		}
		return nil
	}
	if l.cfg.FirstCall > 0 {
		c.timer = time.AfterFunc(l.cfg.FirstCall, c.expire)
	}
	return c
}

// count counts c as open, unless it is over a cap: then over names the
// cap. It returns the connections open, and those from c's key.
func (l *Listener) count(c *conn) (over string, open, fromKey int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.cfg.MaxConns > 0 && l.mu.open >= l.cfg.MaxConns:
		over = "total"
	case c.key != "" && l.cfg.MaxPerAddr > 0 && l.mu.byKey[c.key] >= l.cfg.MaxPerAddr:
		over = "per address"
	default:
		l.mu.open++
		if c.key != "" {
			l.mu.byKey[c.key]++
		}
		if c.tcp {
			tcpConns.Store(c.ends, c)
		}
	}
	return over, l.mu.open, l.mu.byKey[c.key]
}

// release uncounts c, which closed.
func (l *Listener) release(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.open--
	if c.key != "" {
		if l.mu.byKey[c.key]--; l.mu.byKey[c.key] <= 0 {
			delete(l.mu.byKey, c.key)
		}
	}
	if c.tcp {
		tcpConns.CompareAndDelete(c.ends, c)
	}
}

// Stats returns l's counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	open := l.mu.open
	l.mu.Unlock()
	return Stats{Open: open, Authenticated: int(l.authenticated.Load()), Refused: l.refused.Load(), Expired: l.expired.Load()}
}

// The states of a connection: waiting for its first authenticated call,
// past it, being closed at the deadline, or closed.
const (
	pending int32 = iota
	authenticated
	expired
	closed
)

// conn is a connection a Listener accepted.
type conn struct {
	net.Conn
	l     *Listener
	key   string // what it counts against MaxPerAddr; "" nothing
	ends  ends   // its two ends' addresses, if tcp: its key in tcpConns
	tcp   bool
	timer *time.Timer // the first-call deadline; nil for none
	state atomic.Int32
	once  sync.Once
}

// Close uncounts the connection, once, and closes it: whoever sees it
// closed sees the counters without it.
func (c *conn) Close() error {
	c.once.Do(func() {
		// NB: the timer only when pending: authenticate stopped it, and
		// expire runs as its function (and before c.timer is set, if the
		// deadline is that short).
		switch c.state.Swap(closed) {
		case pending:
			if c.timer != nil {
				c.timer.Stop()
			}
		case authenticated:
			c.l.authenticated.Add(-1)
		}
		c.l.release(c)
	})
	return c.Conn.Close()
}

// authenticate lifts c's deadline.
func (c *conn) authenticate() {
	if c.state.Load() != pending || !c.state.CompareAndSwap(pending, authenticated) {
		return
	}
	// NB: a Close from now on sees the state authenticated and uncounts
	// it, whether it comes before this count or after.
	c.l.authenticated.Add(1)
	if c.timer != nil {
		c.timer.Stop()
	}
}

// expire closes c at its deadline unless it authenticated by then.
func (c *conn) expire() {
	if !c.state.CompareAndSwap(pending, expired) {
		return
	}
	c.l.expired.Add(1)
	c.Close()
	if n, ok := c.l.expiredLog.Allow(time.Now()); ok {
		c.l.cfg.Log.Info("connections closed: no authenticated call in time", "port", c.l.cfg.Name, "from", c.key,
			"first_call_timeout", c.l.cfg.FirstCall, "closed_since_last_line", n)
	}
}

// Unwrap returns the connection c wraps if a Listener returned it, else c.
func Unwrap(c net.Conn) net.Conn {
	if lc, ok := c.(*conn); ok {
		return lc.Conn
	}
	return c
}

type connKey struct{}

// NewContext returns ctx carrying c, a connection a Listener returned,
// for Authenticated to find: what servers other than gRPC's call with
// each connection's context. Any other c leaves ctx as it is.
func NewContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*conn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// Authenticated lifts the first-call deadline of the connection of the
// call whose context is ctx: the call passed the server's checks. The
// connection is the one NewContext put in ctx, else the TCP connection
// between the ends of ctx's gRPC peer. It does nothing for a context of no
// Listener's connection.
func Authenticated(ctx context.Context) {
	c, ok := ctx.Value(connKey{}).(*conn)
	if !ok {
		c = fromPeer(ctx)
	}
	if c != nil {
		c.authenticate()
	}
}

// tcpConns holds the open TCP connections of every Listener by their ends,
// for a gRPC call to find its connection from its peer (fromPeer).
//
// NB: by both ends, not the remote one alone: a client's port is unique
// to a connection to one server, not to all of the process's listeners.
var tcpConns sync.Map // ends → *conn

// ends are the addresses of a TCP connection's two ends.
type ends struct{ local, remote netip.AddrPort }

// endsOf returns the ends of a connection from local to remote, if both
// are TCP addresses.
func endsOf(local, remote net.Addr) (ends, bool) {
	l, lok := local.(*net.TCPAddr)
	r, rok := remote.(*net.TCPAddr)
	if !lok || !rok {
		return ends{}, false
	}
	return ends{l.AddrPort(), r.AddrPort()}, true
}

// fromPeer returns the connection of the gRPC call whose context is ctx,
// or nil.
func fromPeer(ctx context.Context) *conn {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	e, ok := endsOf(p.LocalAddr, p.Addr)
	if !ok {
		return nil
	}
	c, _ := tcpConns.Load(e)
	lc, _ := c.(*conn)
	return lc
}

// RemoteIP is a TCP connection's remote IP address, any other's remote
// address: Config.Key's default.
func RemoteIP(c net.Conn) string {
	switch a := c.RemoteAddr().(type) {
	case *net.TCPAddr:
		return a.IP.String()
	case nil:
		return ""
	default:
		return a.String()
	}
}
