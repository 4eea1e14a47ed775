package metaserver

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/rpcerr"
	sm "github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// serverOptions are the gRPC settings of the namespace service, the same in
// production, tests and benchmarks: large messages, a fixed pool of stream
// workers instead of a goroutine (and a fresh, growing stack) per call, and
// static flow-control windows.
//
// NB: static windows, because gRPC's dynamic ones are sized by pinging: the
// server answers the first request's data after each ping's return with a
// PING of its own, so that one caller's every call carried a ping and its
// acknowledgement besides the call (two more frames, two more system calls
// and a wake-up on each side). The service's messages are small, and
// StreamWindow exceeds the largest a caller waits for.
func serverOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.MaxRecvMsgSize(callwire.MaxMessage),
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0))),
		grpc.StaticStreamWindowSize(StreamWindow), grpc.StaticConnWindowSize(ConnWindow)}
}

// interceptors are what every unary call of the service passes through,
// in order, over gRPC and over callwire alike: its error translated to a
// status once, at the edge, around the authentication of its caller, the
// check of a members-only call's certificate (none over callwire, which
// serves no members-only method), and, once all passed, the count of its
// connection's authenticated calls (connlimit); inside the translation,
// around the rest, the calls' metrics and the slow-call log, if the member
// has them (Config.Calls), which so see the fserr condition of a failure. A stream passes the same, but for the caller's token:
// only RaftService streams, the members'.
func (m *Member) interceptors() []grpc.UnaryServerInterceptor {
	list := []grpc.UnaryServerInterceptor{rpcerr.UnaryServerInterceptor}
	if m.cfg.Calls != nil {
		list = append(list, m.cfg.Calls)
	}
	list = append(list, m.tokens.Interceptor)
	if m.cfg.TLS != nil {
		list = append(list, tlsconf.MembersOnlyUnary(m.cfg.TLS, membersOnly...))
	}
	return append(list, connlimit.UnaryServerInterceptor)
}

// streamInterceptors are what every stream of the service passes
// through, in order (interceptors).
func (m *Member) streamInterceptors() []grpc.StreamServerInterceptor {
	list := []grpc.StreamServerInterceptor{rpcerr.StreamServerInterceptor}
	if m.cfg.CallStreams != nil {
		list = append(list, m.cfg.CallStreams)
	}
	return append(list, tlsconf.MembersOnlyStream(m.cfg.TLS, membersOnly...), connlimit.StreamServerInterceptor)
}

// chain is interceptors as one, each around the next, as gRPC chains them.
// A call costs two allocations however many there are: its place in the
// chain, and the one handler every interceptor is given, which moves it on.
// NB: so each interceptor calls its handler at most once, as ours do.
func chain(interceptors []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		c := &chained{interceptors: interceptors, info: info, last: h}
		c.handler = c.next
		return c.next(ctx, req)
	}
}

// chained is a call's way through a chain of interceptors.
type chained struct {
	interceptors []grpc.UnaryServerInterceptor
	info         *grpc.UnaryServerInfo
	last         grpc.UnaryHandler // the method's own
	handler      grpc.UnaryHandler // next, made once
	at           int               // the next interceptor to call
}

func (c *chained) next(ctx context.Context, req any) (any, error) {
	if c.at == len(c.interceptors) {
		return c.last(ctx, req)
	}
	in := c.interceptors[c.at]
	c.at++
	return in(ctx, req, c.info, c.handler)
}

// The static HTTP/2 flow-control windows of the service's connections, in
// bytes, and of its clients' (internal/client; java/core's Channels): what a
// stream, and all the streams of a connection together, may send before the
// receiver grants more. gRPC's dynamic windows start at 64 KiB and grow to
// 16 MiB by pinging (ServerOptions); these are as large as a listing's page
// or a batch of calls needs, and a Raft snapshot's chunks flow through them
// at a window per round trip.
const (
	StreamWindow = 4 << 20
	ConnWindow   = 16 << 20
)

// membersOnly are the methods only the cluster's members and workers call,
// refused over TLS to a client without a certificate signed by the
// cluster's CA: Raft traffic, and heartbeats (whose answers carry the keys
// of the block access tokens).
var membersOnly = []string{"/strata.v1.RaftService/", "/strata.v1.MetaService/Heartbeat"}

// Serving is a member serving MetaService and RaftService over gRPC, and
// MetaService's unary methods over callwire too, on the same port.
type Serving struct {
	*Member
	Server   *Server
	GRPC     *grpc.Server
	CallWire *callwire.Server
	Conns    *connlimit.Listener // the port's connections, bounded
	Addr     string              // where it serves, host:port
}

// Serve opens a member with cfg, starts it, and serves it on lis, with the
// service's gRPC settings and cfg.TLS's. An empty cfg.Address becomes
// lis's (and so the address of a single member's initial group). The
// connections that open with callwire's preface are callwire's
// (internal/callwire): their calls go through the same handlers and
// interceptors as gRPC's. NB: no other gRPC options: anything that changes
// how a call is served (its credentials, its interceptors) goes through cfg
// and interceptors, so that callwire serves it alike.
//
// The port's connections are bounded by cfg.Conns (internal/connlimit): a
// connection's first authenticated call lifts its first-call deadline, and
// a call is authenticated once it has passed every check: a MetaService
// call's token (any call, with cfg.NoAuth), and over TLS a members-only
// call's certificate (RaftService's streams from the other members,
// workers' heartbeats).
func Serve(cfg Config, lis net.Listener) (*Serving, error) {
	if cfg.Address == "" {
		cfg.Address = lis.Addr().String()
	}
	m, err := open(cfg)
	if err == nil {
		err = m.start()
	}
	if err != nil {
		lis.Close()
		return nil, err
	}
	limits := cfg.Conns
	limits.Name = "namespace service"
	if limits.Log == nil {
		limits.Log = m.cfg.Log
	}
	conns := connlimit.Listen(lis, limits)
	srv := &Server{m: m}
	opts := append(serverOptions(), tlsconf.Creds(cfg.TLS)...)
	opts = append(opts, conns.ServerOptions()...)
	opts = append(opts, grpc.ChainUnaryInterceptor(m.interceptors()...), grpc.ChainStreamInterceptor(m.streamInterceptors()...))
	g := grpc.NewServer(opts...)
	pb.RegisterMetaServiceServer(g, srv)
	pb.RegisterRaftServiceServer(g, m.Transport())
	cw := callwire.NewServer(&pb.MetaService_ServiceDesc, srv, cfg.TLS, chain(m.interceptors()), membersOnly...)
	cw.ConnContext = connlimit.NewContext
	go func() { _ = g.Serve(cw.Split(conns)) }()
	return &Serving{Member: m, Server: srv, GRPC: g, CallWire: cw, Conns: conns, Addr: lis.Addr().String()}, nil
}

// Listen serves a member with cfg on a new listener at addr (host:port;
// port 0 picks one).
func Listen(cfg Config, addr string) (*Serving, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(cfg, lis)
}

// Close stops serving and closes the member.
func (s *Serving) Close() error {
	s.GRPC.Stop()
	s.CallWire.Close()
	return s.Member.Close()
}

// ReadyWithDefault waits, at most 30 s, until the member is ready, then
// creates the block-mode namespace "default" on bucket storeURI unless it
// exists: what the dev server, the test clusters and the benchmarks start
// with.
func (s *Serving) ReadyWithDefault(ctx context.Context, storeURI string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		return err
	}
	if err := s.EnsureNamespace(ctx, &pb.NamespaceInfo{Name: sm.DefaultNamespace,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: storeURI}); err != nil {
		return fmt.Errorf("create the default namespace: %w", err)
	}
	return nil
}
