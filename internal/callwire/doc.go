// Package callwire is a second transport for a gRPC service's unary
// methods, served on the service's own port beside gRPC: framed calls over
// TCP (or TLS), one at a time on a connection the caller holds alone for the
// call. The caller's thread writes its request and reads its answer; the
// service reads, handles and answers on the connection's goroutine. It is
// not a gRPC replacement: no streams, no multiplexing, no flow control. A
// call ends at its deadline, or when its client closes the connection (the
// server watches for that once a call has run WatchAfter, a second). Raft,
// the workers and streaming methods stay on gRPC.
//
// Why: a lone caller's metadata call through gRPC-Java crosses Netty's event
// loop twice and the service's reader, stream-worker and writer goroutines,
// and spends its CPU on HTTP/2 framing and headers; a blocking round trip on
// loopback costs a fifth of that (docs/benchmarks.md, "At 1 to 16 threads").
// The handlers, the interceptors (authentication, error translation) and the
// messages are gRPC's own, so a call answers the same on either transport.
//
// # The wire (all integers big-endian)
//
// A connection opens with an 8-byte preface from the client: "STRATA1P" (the
// calls follow in plaintext) or "STRATA1T" (a TLS handshake follows, the
// client checking the server's certificate as gRPC does). Serve tells the
// connection from gRPC's by its first bytes: gRPC's begin with HTTP/2's
// "PRI * HTTP/2.0" or a TLS ClientHello (0x16).
//
// Then the client sends a hello: u32 N and N bytes of token text (N = 0: no
// token). Every call of the connection carries it as gRPC metadata
// "authorization: Bearer TOKEN", checked per call as gRPC's calls are.
//
// Then calls, each a request and its response; the client sends the next
// request only once it has read the last response:
//
//	request:  u32 N | u8 M | method (M bytes) | u64 timeout_ns | message
//	response: u32 N | u8 kind | body
//
// N counts the bytes after the N field. The method is gRPC's full name
// ("/strata.v1.MetaService/Batch"); timeout_ns is the caller's time left (0:
// none), the handler's deadline; the message is the protobuf-encoded
// request. A response of kind 0 holds the protobuf-encoded answer, of kind 1
// a google.rpc.Status: the status gRPC would have ended the call with,
// details included. A frame is at most MaxFrame bytes after its length; a
// frame past it, a short one or an unknown kind ends the connection.
//
// The server closes a connection on which no request came for IdleTimeout (5
// minutes); a Pool closes its connections idle for PoolIdleTimeout (1 minute)
// and so never sends a call on one the server closed as idle.
//
// A preface the server does not take (TLS asked of a plaintext server, or
// the reverse) is answered with one response of kind 1, UNAVAILABLE, in
// plaintext, and the connection is closed.
//
// testdata/frames.txt holds frames of every kind, byte for byte, with what
// each says: the Go tests (frames_test.go) and the Java client's
// (io.strata.core.rpc.FramesTest) both encode and decode them, so that a
// format changed in one language alone fails a test. The limits are there
// too: MaxMessage (64 MiB), the one message limit of Strata's gRPC
// services, and MaxFrame.
//
// # What callwire does, and will not do
//
// Its features are frozen: what gRPC does beyond the list below stays
// gRPC's, and a method that needs it is called over gRPC. A change of the
// format takes a new preface ("STRATA2P"), served beside the old one while
// clients that speak only the old one remain.
//
// It does:
//   - unary calls of one gRPC service's methods, by gRPC's full name, with
//     the handlers and the interceptor chain a gRPC server would run;
//   - a deadline per call, the caller's time left, relative (so that the
//     two clocks need not agree);
//   - an answer or a google.rpc.Status with its details, as gRPC's status
//     of the call, codes included;
//   - one token per connection (the hello), presented to every call as
//     gRPC's "authorization: Bearer" metadata, and TLS chosen by preface,
//     with the peer's certificate in the call's context as gRPC's;
//   - cancellation of a call by its client closing the connection, noticed
//     once the call has run WatchAfter;
//   - the closing of connections idle for IdleTimeout.
//
// It does not, and will not:
//   - streams, of either side, or more than one call at a time on a
//     connection (no multiplexing: a caller holds its connection for the
//     call; more callers, more connections);
//   - metadata besides the token: no headers or trailers either way, no
//     per-call credentials, no compression, no message encodings other
//     than protobuf;
//   - flow control, keepalive pings of its own (TCP's keepalive finds a
//     silent peer: SilentPeerTimeout), or a frame to cancel a call
//     (closing the connection cancels it);
//   - retries, failover or load balancing: the clients' one retry layer
//     (internal/client's members, java/core's MetaCaller) does those, over
//     either transport alike;
//   - messages over MaxMessage, either way (a frame past MaxFrame: the
//     server answers RESOURCE_EXHAUSTED instead of such an answer, and
//     ends the connection of such a request);
//   - methods the server refuses (NewServer's refused: those gRPC serves
//     only to the cluster's members), which answer UNIMPLEMENTED.
package callwire
