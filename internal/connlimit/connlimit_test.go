package connlimit_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/connlimit/connlimittest"
)

// lineServer serves l: each connection echoes the lines it reads, and a
// line "auth" is an authenticated call. Each connection the server closes
// is sent on closed.
type lineServer struct {
	l      *connlimit.Listener
	closed chan net.Conn
}

func serveLines(t *testing.T, cfg connlimit.Config) *lineServer {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &lineServer{l: connlimit.Listen(lis, cfg), closed: make(chan net.Conn, 100)}
	t.Cleanup(func() { s.l.Close() })
	go func() {
		for {
			c, err := s.l.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *lineServer) serve(c net.Conn) {
	defer func() { c.Close(); s.closed <- c }()
	ctx := connlimit.NewContext(context.Background(), c)
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if line == "auth\n" {
			connlimit.Authenticated(ctx)
		}
		if _, err := io.WriteString(c, line); err != nil {
			return
		}
	}
}

// dialFrom connects to s from the loopback address ip (127.0.0.0/8).
func (s *lineServer) dialFrom(t *testing.T, ip string) net.Conn {
	t.Helper()
	c, err := connlimittest.DialFrom(ip, s.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echoes reports whether c answers a line with the same line.
func echoes(c net.Conn, line string) bool {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return false
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && got == line+"\n"
}

// A connection over a cap, per address or in total, is closed at once
// while the others are served; a slot is free again once its connection
// closes.
func TestCapsRefuseTheConnectionOverThem(t *testing.T) {
	s := serveLines(t, connlimit.Config{MaxConns: 3, MaxPerAddr: 2, FirstCall: -1})
	a1, a2 := s.dialFrom(t, "127.0.0.2"), s.dialFrom(t, "127.0.0.2")
	if !echoes(a1, "a1") || !echoes(a2, "a2") {
		t.Fatal("the first two connections from 127.0.0.2 are not served")
	}
	if a3 := s.dialFrom(t, "127.0.0.2"); !connlimittest.ClosedWithin(t, a3, 10*time.Second) {
		t.Fatal("a third connection from 127.0.0.2, over the cap of 2 per address, is not closed")
	}
	b := s.dialFrom(t, "127.0.0.3")
	if !echoes(b, "b") {
		t.Fatal("a connection from 127.0.0.3 is not served while 127.0.0.2 is at its cap")
	}
	if c := s.dialFrom(t, "127.0.0.4"); !connlimittest.ClosedWithin(t, c, 10*time.Second) {
		t.Fatal("a fourth connection, over the cap of 3 in all, is not closed")
	}
	if st := s.l.Stats(); st.Open != 3 || st.Refused != 2 {
		t.Errorf("stats %+v, want 3 open and 2 refused", st)
	}
	a1.Close()
	<-s.closed // the server saw a1 close
	if a4 := s.dialFrom(t, "127.0.0.2"); !echoes(a4, "a4") {
		t.Fatal("a connection from 127.0.0.2 is not served once one of its two closed")
	}
	if !echoes(a2, "a2 again") || !echoes(b, "b again") {
		t.Fatal("the connections within the caps stopped being served")
	}
}

// A connection that makes no authenticated call is closed at the deadline;
// one that made one stays.
func TestFirstCallDeadline(t *testing.T) {
	const deadline = 200 * time.Millisecond
	s := serveLines(t, connlimit.Config{FirstCall: deadline})
	authed := s.dialFrom(t, "127.0.0.1")
	if !echoes(authed, "auth") {
		t.Fatal("not served")
	}
	idle := s.dialFrom(t, "127.0.0.1") // opened after authed: its deadline passes later
	start := time.Now()
	if !connlimittest.ClosedWithin(t, idle, 10*time.Second) {
		t.Fatal("a connection that made no authenticated call is still open after 10 s")
	}
	if took := time.Since(start); took < deadline/2 {
		t.Errorf("closed after %v, before the deadline of %v", took, deadline)
	}
	if !echoes(authed, "still") {
		t.Fatal("a connection that made an authenticated call was closed at the deadline")
	}
	if st := s.l.Stats(); st.Expired != 1 || st.Open != 1 || st.Authenticated != 1 {
		t.Errorf("stats %+v, want 1 expired, 1 open and authenticated", st)
	}
	authed.Close()
	<-s.closed
	<-s.closed
	if st := s.l.Stats(); st.Open != 0 || st.Authenticated != 0 {
		t.Errorf("stats %+v once every connection closed, want none open", st)
	}
}

// A gRPC server's calls find their connection: one that made a call
// outlives the deadline, one that only connected does not.
func TestGRPCCallsFindTheirConnection(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.Listen(lis, connlimit.Config{FirstCall: 300 * time.Millisecond})
	g := grpc.NewServer(append(l.ServerOptions(), grpc.ChainUnaryInterceptor(connlimit.UnaryServerInterceptor))...)
	healthpb.RegisterHealthServer(g, health.NewServer())
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func() *grpc.ClientConn {
		cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return cc
	}
	caller := dial()
	if _, err := healthpb.NewHealthClient(caller).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	silent := dial()
	silent.Connect()
	for s := silent.GetState(); s != connectivity.Ready; s = silent.GetState() {
		if !silent.WaitForStateChange(ctx, s) {
			t.Fatal("the silent client did not connect")
		}
	}
	if !silent.WaitForStateChange(ctx, connectivity.Ready) {
		t.Fatal("the connection of a client that made no call is still open after 20 s")
	}
	if _, err := healthpb.NewHealthClient(caller).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.Expired != 1 || st.Authenticated != 1 {
		t.Errorf("stats %+v, want the silent connection expired and the caller's authenticated", st)
	}
}

// On a Unix socket, connections count against their user's cap.
func TestPeerUserKeysUnixConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	l := connlimit.Listen(lis, connlimit.Config{MaxPerAddr: 1, Key: connlimit.PeerUser, FirstCall: -1})
	c1, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	s1, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	if got, want := connlimit.PeerUser(connlimit.Unwrap(s1)), fmt.Sprintf("uid %d", os.Getuid()); got != want {
		t.Fatalf("PeerUser = %q, want %q", got, want)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c2, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if !connlimittest.ClosedWithin(t, c2, 10*time.Second) {
		t.Fatal("a second connection of the same user, over the cap of 1, is not closed")
	}
	// Once the first closed, the user's next connection is served.
	c1.Close()
	s1.Close()
	c3, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	s3 := <-accepted
	defer s3.Close()
	if _, err := c3.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s3, make([]byte, 1)); err != nil {
		t.Fatalf("the connection accepted is not the third: %v", err)
	}
	if st := l.Stats(); st.Open != 1 || st.Refused != 1 {
		t.Errorf("stats %+v, want 1 open, 1 refused", st)
	}
}
