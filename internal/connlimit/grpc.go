package connlimit

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
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
// connections: the keepalive settings above. (gRPC's own ConnectionTimeout
// bounds the handshakes only; the first-call deadline bounds them too.)
//
// NB: no stats.Handler, which is how gRPC hands a server each connection's
// context: with one, gRPC makes some twenty more allocations a call to
// tell it of each call's events, 8% of a unary call's time; a call finds
// its connection by its peer's addresses instead (Authenticated).
func (l *Listener) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: IdleTimeout, Time: PingAfter, Timeout: PingTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: MinPingInterval}),
	}
}

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
