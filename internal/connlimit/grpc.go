package connlimit

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/stats"
)

// The keepalive settings of a gRPC server behind a Listener
// (ServerOptions):
//
//   - IdleTimeout: a connection with no call for this long is closed (a
//     GOAWAY; a client reconnects at its next call), as callwire closes
//     its idle connections;
//   - after PingAfter with nothing read, the server pings the client, and
//     closes the connection if the answer takes longer than PingTimeout;
//   - a client may ping at most every MinPingInterval, and only while it
//     has a call open; one that pings more is disconnected (gRPC's
//     "too_many_pings"). No Strata client pings.
const (
	IdleTimeout     = 5 * time.Minute
	PingAfter       = time.Minute
	PingTimeout     = 20 * time.Second
	MinPingInterval = 5 * time.Minute
)

// ServerOptions returns the options of a gRPC server that serves l's
// connections: each call's context carries its connection (for
// Authenticated), and the keepalive settings above.
//
// NB: a stats.Handler is how gRPC hands a server each connection's context
// (TagConn, from which every call's context derives); it finds the
// connection by its remote address. gRPC's own ConnectionTimeout bounds
// the handshakes only.
func (l *Listener) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.StatsHandler(tagger{l}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: IdleTimeout, Time: PingAfter, Timeout: PingTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: MinPingInterval}),
	}
}

// tagger puts each gRPC connection of l in its context.
type tagger struct{ l *Listener }

func (t tagger) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	if c := t.l.lookup(info.RemoteAddr); c != nil {
		return context.WithValue(ctx, connKey{}, c)
	}
	return ctx
}

func (tagger) HandleConn(context.Context, stats.ConnStats)                     {}
func (tagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (tagger) HandleRPC(context.Context, stats.RPCStats)                       {}

// UnaryServerInterceptor counts every unary call that reaches it as
// authenticated (Authenticated): the innermost interceptor of a server
// whose outer ones check each call.
func UnaryServerInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	Authenticated(ctx)
	return h(ctx, req)
}

// StreamServerInterceptor is UnaryServerInterceptor for streams.
func StreamServerInterceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	Authenticated(ss.Context())
	return h(srv, ss)
}
