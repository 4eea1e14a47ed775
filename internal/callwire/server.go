package callwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/token"
)

// handshakeTimeout bounds a new connection's preface and TLS handshake, so
// that a client that connects and sends nothing does not hold a goroutine.
const handshakeTimeout = 20 * time.Second

// IdleTimeout is how long the server keeps a connection on which no request
// comes: a client's pool closes its connections idle for PoolIdleTimeout,
// well before, and this bounds what clients that went quiet, or away without
// closing, hold of the server (a goroutine and its buffers each).
const IdleTimeout = 5 * time.Minute

// keptBuffer is the largest buffer a connection keeps between calls; a
// larger request or answer gets its own. readBuffer is a connection's read
// buffer: a frame larger than it is read straight into the frame's buffer.
// NB: small, because a client keeps its idle connections open and the
// server holds them: a few connections of each of thousands of clients.
const (
	keptBuffer = 64 << 10
	readBuffer = 8 << 10
)

// Server serves the unary methods of one gRPC service over callwire.
//
// Safe for concurrent use.
type Server struct {
	// ConnContext, if set, returns the context of the calls of connection
	// c (as its listener returned it) from ctx; set it before serving.
	ConnContext func(ctx context.Context, c net.Conn) context.Context

	impl      any
	methods   map[string]grpc.MethodDesc
	intercept grpc.UnaryServerInterceptor
	tls       *tls.Config
	idle      time.Duration // IdleTimeout; tests shorten it
	watch     time.Duration // WatchAfter; tests shorten it
	onWatch   func()        // tests: called when a client's watch starts (peerWatch)
	watchOnce sync.Once     // starts lookAtCalls
	closed    chan struct{} // closed by Close

	mu struct {
		sync.Mutex
		conns map[net.Conn]*peerWatch // each served, with its watch once past its hello
	}
}

// NewServer returns a server of desc's unary methods on impl, each call made
// through intercept (nil: none), as a gRPC server with that interceptor
// chain would make it; over TLS with tlsConfig (nil: plaintext). Methods
// whose full names start with one of refused are not served (they answer
// UNIMPLEMENTED): those gRPC serves only to the cluster's members.
func NewServer(desc *grpc.ServiceDesc, impl any, tlsConfig *tls.Config, intercept grpc.UnaryServerInterceptor, refused ...string) *Server {
	s := &Server{impl: impl, methods: map[string]grpc.MethodDesc{}, intercept: intercept, tls: tlsConfig,
		idle: IdleTimeout, watch: WatchAfter, closed: make(chan struct{})}
	s.mu.conns = map[net.Conn]*peerWatch{}
outer:
	for _, m := range desc.Methods {
		name := "/" + desc.ServiceName + "/" + m.MethodName
		for _, p := range refused {
			if strings.HasPrefix(name, p) {
				continue outer
			}
		}
		s.methods[name] = m
	}
	return s
}

// Close closes every connection the server serves; those it is handed later
// are closed at once.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
	default:
		close(s.closed)
	}
	for c := range s.mu.conns {
		c.Close()
	}
}

// track records c as served; false if the server is closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		return false
	default:
	}
	s.mu.conns[c] = nil
	return true
}

// watched records w as the watch of c, which track recorded.
func (s *Server) watched(c net.Conn, w *peerWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.conns[c] = w
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.conns, c)
}

// serveConn serves the calls of c, whose preface was read, until it ends.
// NB: c's deadline, which Split set, bounds the TLS handshake and the hello;
// the calls have none but their own.
func (s *Server) serveConn(c net.Conn, preface string) {
	defer c.Close()
	if !s.track(c) {
		return
	}
	defer s.untrack(c)
	tracked := c // c becomes the TLS connection over it
	var info credentials.AuthInfo
	switch {
	case preface == PrefaceTLS && s.tls != nil:
		tc := tls.Server(c, s.tls)
		if err := tc.Handshake(); err != nil {
			return
		}
		info = credentials.TLSInfo{State: tc.ConnectionState(),
			CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}
		c = tc
	case preface == PrefaceTLS:
		refuse(c, "the service at %s serves plaintext: connect without TLS", c.LocalAddr())
		return
	case preface == PrefacePlain && s.tls != nil:
		refuse(c, "the service at %s serves TLS only: connect with TLS", c.LocalAddr())
		return
	case preface != PrefacePlain:
		refuse(c, "unknown callwire preface %q", preface)
		return
	}
	r := bufio.NewReaderSize(c, readBuffer)
	hello, err := readFrame(r, nil, maxHello)
	if err != nil {
		return
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: c.RemoteAddr(), LocalAddr: c.LocalAddr(), AuthInfo: info})
	if s.ConnContext != nil {
		ctx = s.ConnContext(ctx, tracked)
	}
	if len(hello) > 0 {
		ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(token.MetadataKey, token.Bearer+string(hello)))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &peerWatch{c: c, r: r, cancel: cancel, onRead: s.onWatch}
	s.watched(tracked, w)
	s.watchCalls()
	s.calls(ctx, c, r, w)
}

// calls reads requests from r and answers each on c, until either ends or
// no request comes for s.idle. A call that runs long has its client watched
// (w): ctx, the connection's, ends if the client goes.
//
// NB: the read deadline moves at most every quarter of s.idle, not at every
// call: a connection is closed after 3/4 to all of s.idle without a request,
// and a request always has at least 3/4 of it to arrive.
func (s *Server) calls(ctx context.Context, c net.Conn, r *bufio.Reader, w *peerWatch) {
	var in, out []byte
	var renew time.Time
	for {
		if now := time.Now(); !now.Before(renew) {
			if err := c.SetReadDeadline(now.Add(s.idle)); err != nil {
				return
			}
			renew = now.Add(s.idle / 4)
		}
		f, err := readFrame(r, in, MaxFrame)
		if err != nil {
			return
		}
		req, err := parseRequest(f)
		if err != nil {
			return
		}
		w.start()
		out = s.call(ctx, req, out[:0])
		if w.stop() {
			renew = time.Time{} // the watch spent the read deadline
		}
		if _, err := c.Write(out); err != nil {
			return
		}
		in, out = kept(f), kept(out)
	}
}

// kept is b, to be reused for the next call, unless it is too large to keep.
func kept(b []byte) []byte {
	if cap(b) > keptBuffer {
		return nil
	}
	return b[:0]
}

// call makes req and appends its response frame to out.
func (s *Server) call(ctx context.Context, req request, out []byte) []byte {
	m, ok := s.methods[req.method]
	if !ok {
		return appendStatus(out, status.Newf(codes.Unimplemented, "method %s is not served over callwire", req.method))
	}
	if req.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(min(req.timeout, uint64(1<<62))))
		defer cancel()
	}
	dec := func(v any) error {
		if err := proto.Unmarshal(req.message, v.(proto.Message)); err != nil {
			return status.Errorf(codes.Internal, "callwire: the request of %s: %v", req.method, err)
		}
		return nil
	}
	resp, err := m.Handler(s.impl, ctx, dec, s.intercept)
	if err != nil {
		return appendStatus(out, status.Convert(err))
	}
	b, err := proto.MarshalOptions{}.MarshalAppend(startResponse(out, kindMessage), resp.(proto.Message))
	if err != nil {
		return appendStatus(out, status.Newf(codes.Internal, "callwire: the answer of %s: %v", req.method, err))
	}
	if len(b)-4 > MaxFrame {
		return appendStatus(out, status.Newf(codes.ResourceExhausted, "the answer of %s is %d bytes, more than %d",
			req.method, len(b)-4, MaxFrame))
	}
	return endFrame(b)
}

// appendStatus appends a response frame of kind 1 holding st.
func appendStatus(out []byte, st *status.Status) []byte {
	b, err := proto.MarshalOptions{}.MarshalAppend(startResponse(out, kindStatus), st.Proto())
	if err != nil {
		// NB: a status is a code, a string and details that were encoded
		// once already; this cannot fail but for a bug.
		panic(fmt.Sprintf("callwire: encode a status: %v", err))
	}
	return endFrame(b)
}

// refuse answers a connection whose preface the server does not take with
// an UNAVAILABLE status, in plaintext.
//
// NB: then it reads what the client sends until the client closes (or the
// handshake's deadline passes): a connection closed with bytes unread is
// reset, and the client, still writing its hello and first call, would see
// the reset instead of the refusal.
func refuse(c net.Conn, format string, args ...any) {
	if _, err := c.Write(appendStatus(nil, status.Newf(codes.Unavailable, format, args...))); err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, maxHello+MaxFrame))
}
