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
package callwire
