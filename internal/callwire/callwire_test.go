package callwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The service's own handlers over callwire are tested in
// internal/metaserver (callwire_test.go); these test the transport on a
// fake of the service.

// fake answers GetFileStatus with the path and what the call's context
// held: its token and whether it had a deadline. A stat of /block says so on
// blocked, then waits until release closes.
type fake struct {
	pb.UnimplementedMetaServiceServer
	blocked chan struct{}
	release chan struct{}
	ended   chan error // a stat of /wait says so on blocked, waits for its context's end and says why
}

func (f fake) GetFileStatus(ctx context.Context, r *pb.GetFileStatusRequest) (*pb.GetFileStatusResponse, error) {
	switch r.Path {
	case "/missing":
		return nil, status.Error(codes.NotFound, "/missing: no such file")
	case "/block":
		f.blocked <- struct{}{}
		<-f.release
		return nil, status.Error(codes.Aborted, "released")
	case "/wait":
		f.blocked <- struct{}{}
		<-ctx.Done()
		f.ended <- ctx.Err()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	md, _ := metadata.FromIncomingContext(ctx)
	_, deadline := ctx.Deadline()
	owner := "deadline=false"
	if deadline {
		owner = "deadline=true"
	}
	return &pb.GetFileStatusResponse{Status: &pb.FileStatus{Name: r.Path, Owner: owner,
		Group: firstOf(md.Get("authorization"))}}, nil
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// serveFake serves the fake over gRPC and callwire on one listener; it
// returns the address. Its interceptor counts the calls in intercepted.
func serveFake(t *testing.T, intercepted *atomic.Int32) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	intercept := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		intercepted.Add(1)
		return h(ctx, req)
	}
	g := grpc.NewServer()
	pb.RegisterMetaServiceServer(g, fake{})
	s := NewServer(&pb.MetaService_ServiceDesc, fake{}, nil, intercept, "/strata.v1.MetaService/Heartbeat")
	go func() { _ = g.Serve(s.Split(lis)) }()
	t.Cleanup(func() { g.Stop(); s.Close() })
	return lis.Addr().String()
}

const stat = "/strata.v1.MetaService/GetFileStatus"

func TestCallsAndGRPCShareThePort(t *testing.T) {
	ctx := context.Background()
	var intercepted atomic.Int32
	addr := serveFake(t, &intercepted)
	c, err := Dial(ctx, addr, nil, "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		var r pb.GetFileStatusResponse
		if err := c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
			t.Fatal(err)
		}
		if r.Status.Name != "/a" || r.Status.Group != "Bearer tok" || r.Status.Owner != "deadline=false" {
			t.Fatalf("call %d answered %v", i, &r)
		}
	}
	if n := intercepted.Load(); n != 3 {
		t.Fatalf("the interceptor saw %d calls, want 3", n)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var r pb.GetFileStatusResponse
	if err := c.Invoke(dctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil || r.Status.Owner != "deadline=true" {
		t.Fatalf("a call with a deadline: %v, %v", &r, err)
	}
	err = c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/missing"}, &r)
	if st := status.Convert(err); st.Code() != codes.NotFound || st.Message() != "/missing: no such file" {
		t.Fatalf("an error answered: %v", err)
	}
	for _, m := range []string{"/strata.v1.MetaService/Heartbeat", "/strata.v1.MetaService/Nope"} {
		if err := c.Invoke(ctx, m, &pb.HeartbeatRequest{}, &pb.HeartbeatResponse{}); status.Code(err) != codes.Unimplemented {
			t.Fatalf("%s: %v, want UNIMPLEMENTED", m, err)
		}
	}

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := pb.NewMetaServiceClient(cc).GetFileStatus(ctx, &pb.GetFileStatusRequest{Path: "/g"}); err != nil {
		t.Fatalf("gRPC on the same port: %v", err)
	}
	if err := c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatalf("callwire after gRPC: %v", err)
	}
}

// rawConn opens a connection and sends b.
func rawConn(t *testing.T, addr string, b []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBadInputEndsTheConnection(t *testing.T) {
	var intercepted atomic.Int32
	addr := serveFake(t, &intercepted)
	hello := appendHello([]byte(PrefacePlain), "")
	tooLong := binary.BigEndian.AppendUint32(bytes.Clone(hello), MaxFrame+1)
	noMethod := append(binary.BigEndian.AppendUint32(bytes.Clone(hello), 9), make([]byte, 9)...)
	short := append(binary.BigEndian.AppendUint32(bytes.Clone(hello), 5), 4, 'a', 'b', 'c', 'd')
	for name, b := range map[string][]byte{"a frame past the limit": tooLong, "no method": noMethod,
		"no timeout": short, "a hello past its limit": binary.BigEndian.AppendUint32([]byte(PrefacePlain), maxHello+1)} {
		c := rawConn(t, addr, b)
		if n, err := io.Copy(io.Discard, c); err != nil || n != 0 {
			t.Fatalf("%s: read %d bytes (%v), want the connection closed", name, n, err)
		}
	}
	if n := intercepted.Load(); n != 0 {
		t.Fatalf("%d calls were made", n)
	}

	// A preface of another mode: refused, saying why.
	c := rawConn(t, addr, []byte("STRATA1X"))
	f, err := readFrame(c, nil, MaxFrame)
	if err != nil {
		t.Fatal(err)
	}
	kind, body, err := parseResponse(f)
	if err != nil || kind != kindStatus || !bytes.Contains(body, []byte(`unknown callwire preface "STRATA1X"`)) {
		t.Fatalf("an unknown preface answered kind %d %q (%v)", kind, body, err)
	}
	if _, err := readFrame(c, nil, MaxFrame); !errors.Is(err, io.EOF) {
		t.Fatalf("after the refusal: %v, want the connection closed", err)
	}
	// TLS asked of a plaintext server: the refusal is no handshake.
	if c, err := Dial(context.Background(), addr, &tls.Config{ServerName: "localhost"}, ""); err == nil {
		c.Close()
		t.Fatal("a TLS connection to a plaintext server was made")
	}
}

func TestCloseEndsConnections(t *testing.T) {
	ctx := context.Background()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(&pb.MetaService_ServiceDesc, fake{}, nil, nil)
	split := s.Split(lis)
	c, err := Dial(ctx, lis.Addr().String(), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var r pb.GetFileStatusResponse
	if err := c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatal(err)
	}
	split.Close()
	s.Close()
	if err := c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); status.Code(err) != codes.Unavailable {
		t.Fatalf("a call after the server closed: %v, want UNAVAILABLE", err)
	}
	if _, err := split.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add(appendRequest(nil, stat, 7, []byte("msg"))[4:])
	f.Add([]byte{0})
	f.Add([]byte{3, 'a', 'b'})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		again := appendRequest(nil, r.method, r.timeout, r.message)
		if !bytes.Equal(again[4:], b) {
			t.Fatalf("%x parsed as %+v, which encodes as %x", b, r, again[4:])
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	f.Add(appendRequest(nil, stat, 0, nil))
	f.Add([]byte{0, 0, 0, 1, kindStatus})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := readFrame(bytes.NewReader(b), nil, 1<<16)
		if err != nil {
			return
		}
		if len(fr) > 1<<16 || !bytes.Equal(fr, b[4:4+len(fr)]) {
			t.Fatalf("%x read as %x", b, fr)
		}
		_, _, _ = parseResponse(fr)
	})
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// serveCalls serves f over callwire alone on loopback, the server set up by
// setup (nil: as NewServer makes it); it returns the address and the count
// of connections accepted.
func serveCalls(t *testing.T, f fake, setup func(*Server)) (string, *atomic.Int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: lis}
	s := NewServer(&pb.MetaService_ServiceDesc, f, nil, nil)
	if setup != nil {
		setup(s)
	}
	split := s.Split(counted)
	t.Cleanup(func() { split.Close(); s.Close() })
	return lis.Addr().String(), &counted.n
}

func TestPoolReusesItsConnections(t *testing.T) {
	ctx := context.Background()
	f := fake{blocked: make(chan struct{}), release: make(chan struct{})}
	defer close(f.release)
	addr, dialled := serveCalls(t, f, nil)
	p := NewPool(addr, nil, "tok")
	var r pb.GetFileStatusResponse
	for range 5 {
		if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
			t.Fatal(err)
		}
	}
	if n := dialled.Load(); n != 1 {
		t.Fatalf("5 calls in turn made %d connections, want 1", n)
	}
	// A call whose connection fails leaves it out of the pool: the next
	// call dials. (A call cancelled while it waits for its answer ends at
	// once, and its connection with it.)
	cancelled := func() {
		t.Helper()
		cctx, cancel := context.WithCancel(ctx)
		go func() { <-f.blocked; cancel() }()
		if err := p.Invoke(cctx, stat, &pb.GetFileStatusRequest{Path: "/block"}, &r); status.Code(err) != codes.Canceled {
			t.Fatalf("a call cancelled while it waits: %v, want CANCELED", err)
		}
	}
	cancelled()
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatal(err)
	}
	if n := dialled.Load(); n != 2 {
		t.Fatalf("%d connections after a failed one, want 2", n)
	}
	// A status answered is no failure of the connection.
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/missing"}, &r); status.Code(err) != codes.NotFound {
		t.Fatalf("a missing file: %v", err)
	}
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatal(err)
	}
	if n := dialled.Load(); n != 2 {
		t.Fatalf("%d connections after an error answered, want 2", n)
	}
	// Two connections idle; one failing drops the other too.
	held, err := p.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatal(err)
	}
	p.give(held)
	if n := dialled.Load(); n != 3 {
		t.Fatalf("%d connections for two at once, want 3 in all", n)
	}
	cancelled()
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
		t.Fatal(err)
	}
	if n := dialled.Load(); n != 4 {
		t.Fatalf("%d connections after one of two idle failed, want 4: the other is dropped with it", n)
	}
	p.Close()
	if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); status.Code(err) != codes.Canceled {
		t.Fatalf("a call after Close: %v", err)
	}
}

// A pool closes the connections no call took for PoolIdleTimeout, the
// oldest first, and dials when only those are left.
func TestPoolClosesConnectionsIdleForAMinute(t *testing.T) {
	ctx := context.Background()
	addr, dialled := serveCalls(t, fake{}, nil)
	p := NewPool(addr, nil, "")
	defer p.Close()
	t0 := time.Now()
	now := t0
	p.now = func() time.Time { return now }
	call := func() {
		t.Helper()
		var r pb.GetFileStatusResponse
		if err := p.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil {
			t.Fatal(err)
		}
	}
	older, err := p.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := p.take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p.give(older)
	p.give(newer)
	now = t0.Add(PoolIdleTimeout - time.Second)
	call() // takes newer, and gives it back now
	if n := dialled.Load(); n != 2 {
		t.Fatalf("%d connections, want the 2 idle ones", n)
	}
	now = t0.Add(PoolIdleTimeout)
	call() // older is a minute idle: closed; newer serves
	if n := dialled.Load(); n != 2 {
		t.Fatalf("%d connections after a call with one fresh one idle, want 2", n)
	}
	if _, err := older.c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the connection idle for a minute: read %v, want it closed", err)
	}
	if _, err := newer.c.Write(nil); err != nil {
		t.Fatalf("the connection used a second ago: %v", err)
	}
	now = now.Add(PoolIdleTimeout)
	call()
	if n := dialled.Load(); n != 3 {
		t.Fatalf("%d connections after all idle ones expired, want a third dialled", n)
	}
}

// The server closes a connection on which no request came for its idle
// timeout; one whose call takes longer than that stays.
func TestServerClosesIdleConnections(t *testing.T) {
	ctx := context.Background()
	f := fake{blocked: make(chan struct{}), release: make(chan struct{})}
	addr, _ := serveCalls(t, f, func(s *Server) { s.idle = 200 * time.Millisecond })
	busy, err := Dial(ctx, addr, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	answered := statLater(busy, "/block")
	<-f.blocked
	quiet, err := Dial(ctx, addr, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	// NB: the bound is for a broken test; the server's close ends the read.
	if err := quiet.c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := quiet.c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("a connection idle past the server's timeout: read %v, want EOF", err)
	}
	// The busy connection has been in its call longer than that.
	close(f.release)
	if err := <-answered; status.Code(err) != codes.Aborted {
		t.Fatalf("the call that outlasted the idle timeout: %v, want its answer (ABORTED)", err)
	}
	var r pb.GetFileStatusResponse
	if err := busy.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: "/a"}, &r); err != nil || r.Status.GetName() != "/a" {
		t.Fatalf("the next call on the busy connection: %v %v", &r, err)
	}
}

// A call whose client closes the connection while it runs has its context
// cancelled, once it has run the server's watch delay; a call that ends
// while watched leaves the connection as it was.
func TestCallsEndWhenTheirClientGoes(t *testing.T) {
	ctx := context.Background()
	f := fake{blocked: make(chan struct{}), release: make(chan struct{}), ended: make(chan error, 1)}
	watching := make(chan struct{}, 1)
	addr, _ := serveCalls(t, f, func(s *Server) {
		s.watch = time.Millisecond
		s.onWatch = func() {
			select {
			case watching <- struct{}{}:
			default: // a watch of a call the test does not wait for (/a, /b: a slow machine)
			}
		}
	})
	c, err := Dial(ctx, addr, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answered := statLater(c, "/block")
	<-f.blocked
	<-watching
	close(f.release)
	if err := await(t, answered, "the watched call's answer"); status.Code(err) != codes.Aborted {
		t.Fatalf("a watched call: %v, want its answer (ABORTED)", err)
	}
	for _, p := range []string{"/a", "/b"} {
		var r pb.GetFileStatusResponse
		if err := c.Invoke(ctx, stat, &pb.GetFileStatusRequest{Path: p}, &r); err != nil || r.Status.GetName() != p {
			t.Fatalf("a call after a watched one: %v %v", &r, err)
		}
	}

	select {
	case <-watching: // of /a or /b, which are done: no more come
	default:
	}
	answered = statLater(c, "/wait")
	<-f.blocked
	<-watching
	c.c.Close() // the client goes, its call unanswered
	if err := await(t, f.ended, "the end of the call whose client went"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the call whose client went: its context ended with %v, want canceled", err)
	}
	<-answered
}

// statLater makes a stat of path on c in the background; its error comes
// on the channel.
func statLater(c *Conn, path string) <-chan error {
	answered := make(chan error, 1)
	go func() {
		var r pb.GetFileStatusResponse
		answered <- c.Invoke(context.Background(), stat, &pb.GetFileStatusRequest{Path: path}, &r)
	}()
	return answered
}

// await returns what ch gives; it fails the test after 30 s, a bound for a
// broken test, not a synchronisation.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing in 30 s", what)
		panic("unreachable")
	}
}
