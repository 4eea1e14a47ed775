package callwire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Conn is a client's connection to a callwire server. The Java client has
// its own (java/core's io.strata.core.rpc); this one is Go's, for tests and
// tools.
//
// Not safe for concurrent use: one call at a time.
type Conn struct {
	c      net.Conn
	r      *bufio.Reader
	buf    []byte
	failed bool // the connection failed and was closed
}

// Dial connects to the callwire server at addr, over TLS with tlsConfig
// (nil: plaintext), and says hello with token (empty: none).
func Dial(ctx context.Context, addr string, tlsConfig *tls.Config, token string) (*Conn, error) {
	c, err := DialTCP(ctx, addr)
	if err != nil {
		return nil, err
	}
	preface := PrefacePlain
	if tlsConfig != nil {
		preface = PrefaceTLS
	}
	hello := appendHello([]byte(preface), token)
	if tlsConfig != nil {
		if _, err := c.Write(hello[:prefaceLen]); err != nil {
			c.Close()
			return nil, err
		}
		if tlsConfig.ServerName == "" {
			// As gRPC does: the certificate must name the host dialled.
			host, _, _ := net.SplitHostPort(addr)
			tlsConfig = tlsConfig.Clone()
			tlsConfig.ServerName = host
		}
		tc := tls.Client(c, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c, hello = tc, hello[prefaceLen:]
	}
	if _, err := c.Write(hello); err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, readBuffer)}, nil
}

// appendHello appends the hello frame of token to b.
func appendHello(b []byte, token string) []byte {
	return append(binary.BigEndian.AppendUint32(b, uint32(len(token))), token...)
}

// Invoke calls method with req and decodes the answer into resp. The
// service's answer of a status is returned as that status's error; a
// failure of the connection as an UNAVAILABLE status, after which c is of
// no more use; ctx's deadline is the call's.
func (c *Conn) Invoke(ctx context.Context, method string, req, resp proto.Message) error {
	if len(method) == 0 || len(method) > 255 {
		return status.Errorf(codes.InvalidArgument, "callwire: method name %q", method)
	}
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	var timeout uint64
	d, ok := ctx.Deadline()
	if ok {
		left := time.Until(d)
		if left <= 0 {
			return status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
		}
		timeout = uint64(left)
	}
	if err := c.c.SetDeadline(d); err != nil {
		return c.broken(err)
	}
	if ctx.Done() != nil {
		// A cancelled call ends at once, as gRPC's does; its connection
		// with it.
		stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	err := c.invoke(method, timeout, req, resp)
	if err != nil && ctx.Err() != nil && c.failed {
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

// invoke makes the call of Invoke, its deadlines set.
func (c *Conn) invoke(method string, timeout uint64, req, resp proto.Message) error {
	b, err := proto.MarshalOptions{}.MarshalAppend(startRequest(c.buf[:0], method, timeout), req)
	if err != nil {
		return status.Errorf(codes.Internal, "callwire: the request of %s: %v", method, err)
	}
	c.buf = endFrame(b)
	if _, err := c.c.Write(c.buf); err != nil {
		return c.broken(err)
	}
	f, err := readFrame(c.r, c.buf, MaxFrame)
	if err != nil {
		return c.broken(err)
	}
	c.buf = kept(f)
	kind, body, err := parseResponse(f)
	if err != nil {
		return c.broken(err)
	}
	if kind == kindStatus {
		var st spb.Status
		if err := proto.Unmarshal(body, &st); err != nil {
			return c.broken(fmt.Errorf("%w: a status: %v", errMalformed, err))
		}
		return status.FromProto(&st).Err()
	}
	if err := proto.Unmarshal(body, resp); err != nil {
		return status.Errorf(codes.Internal, "callwire: the answer of %s: %v", method, err)
	}
	return nil
}

// broken closes c after err, a failure of the connection, and returns it as
// gRPC would: DEADLINE_EXCEEDED for the call's deadline, else UNAVAILABLE
// (a silent peer's timeout among them: SilentPeerTimeout).
func (c *Conn) broken(err error) error {
	c.failed = true
	c.c.Close()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Errorf(codes.Unavailable, "callwire: %v", err)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }
