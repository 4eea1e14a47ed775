package worker_test

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/connlimit/connlimittest"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/scproto"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The bounds of the worker's connections (connlimit, docs/security.md
// "Connections"), on its gRPC port and its short-circuit socket.

// boundedWorker is a local cluster whose worker's connections are bounded
// by limits, with the worker's address and socket.
func boundedWorker(t *testing.T, limits connlimit.Config) (l *local, addr, socket string) {
	t.Helper()
	l = startLocalWith(t, 64<<20, nil, func(cfg *worker.Config, _ *retry.Policy) {
		cfg.Conns = limits
		socket = filepath.Join(cfg.StateDir, "worker.sock")
	})
	reports, err := testcluster.Client(t, l.svc.Addr, "").Workers(context.Background())
	if err != nil || len(reports) != 1 {
		t.Fatalf("workers: %v %v", reports, err)
	}
	return l, reports[0].Info.GetAddress(), socket
}

// silentH2 connects to the gRPC server at addr from ip as a plaintext
// gRPC client does, and says nothing more (connlimittest.SilentHTTP2).
func silentH2(ip, addr string) (net.Conn, error) {
	c, err := connlimittest.DialFrom(ip, addr)
	if err != nil {
		return nil, err
	}
	return connlimittest.SilentHTTP2(c, nil)
}

// On the worker's gRPC port, a connection that makes no call is closed at
// the first-call deadline, and the one from an address over its cap at
// once, while a client's reads and writes are served.
func TestWorkerPortConnectionBounds(t *testing.T) {
	// NB: the clients' connections from 127.0.0.1 (the test cluster's, the
	// test's) stay under perAddr; the silent ones come from 127.0.0.2.
	const deadline, perAddr = 500 * time.Millisecond, 8
	l, addr, _ := boundedWorker(t, connlimit.Config{MaxPerAddr: perAddr, FirstCall: deadline})
	ctx := context.Background()
	c, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.AdminToken(t, l.svc.Addr), NoShortCircuit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := randomBytes(7, 3<<20)
	writeFile(t, c, "/before", data)

	var held []net.Conn
	for i := range perAddr {
		conn, err := silentH2("127.0.0.2", addr)
		if err != nil {
			t.Fatalf("connection %d of %d from 127.0.0.2: %v", i+1, perAddr, err)
		}
		defer conn.Close()
		held = append(held, conn)
	}
	if conn, err := silentH2("127.0.0.2", addr); err == nil {
		conn.Close()
		t.Fatalf("connection %d from 127.0.0.2 was served, over the cap of %d", perAddr+1, perAddr)
	}
	writeFile(t, c, "/during", data)
	for i, conn := range held {
		if !connlimittest.ClosedWithin(t, conn, 10*time.Second) {
			t.Fatalf("silent connection %d is still open after 10 s (the deadline is %v)", i+1, deadline)
		}
	}
	// The client's connection, older than the silent ones, outlived the
	// deadline: its writes were authenticated calls.
	if port, _ := l.w.ConnStats(); port.Authenticated == 0 || port.Expired < perAddr {
		t.Errorf("the port's connections: %+v, want the client's authenticated and the silent ones expired", port)
	}
	before := stats(t, c)
	for _, p := range []string{"/before", "/during"} {
		if got, err := c.ReadFile(ctx, p); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read %s: %v", p, err)
		}
	}
	if after := stats(t, c); after.RpcBytesRead-before.RpcBytesRead != uint64(2*len(data)) {
		t.Errorf("the reads moved %d bytes over RPC, want %d", after.RpcBytesRead-before.RpcBytesRead, 2*len(data))
	}
}

// askWithoutToken sends a short-circuit request without a token on c and
// reports whether the worker answered it (with its refusal).
func askWithoutToken(t *testing.T, c *net.UnixConn) bool {
	t.Helper()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.SetDeadline(time.Time{}) }()
	if err := scproto.Write(c, &pb.ShortCircuitRequest{Block: &pb.BlockRef{InodeId: 1, Length: 1}, Length: 1}, nil); err != nil {
		return false
	}
	resp := &pb.ShortCircuitResponse{}
	return scproto.Read(c, resp) == nil && resp.Error != ""
}

func dialSocket(t *testing.T, socket string) *net.UnixConn {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// On the short-circuit socket, a local user's connection over the user's
// cap is closed at once, while the user's others are served.
func TestWorkerSocketRefusesConnectionsOverTheUsersCap(t *testing.T) {
	const perUser = 2
	_, _, socket := boundedWorker(t, connlimit.Config{MaxPerAddr: perUser, FirstCall: time.Hour})
	var held []*net.UnixConn
	for i := range perUser {
		c := dialSocket(t, socket)
		if !askWithoutToken(t, c) {
			t.Fatalf("connection %d of %d was not served", i+1, perUser)
		}
		held = append(held, c)
	}
	if askWithoutToken(t, dialSocket(t, socket)) {
		t.Fatalf("connection %d of the user was served, over the cap of %d", perUser+1, perUser)
	}
	for i, c := range held {
		if !askWithoutToken(t, c) {
			t.Errorf("connection %d, within the cap, is no longer served", i+1)
		}
	}
}

// On the short-circuit socket, a connection that makes no request with a
// valid token is closed at the first-call deadline, while a client's
// short-circuit reads go on over its connection.
func TestWorkerSocketClosesSilentConnections(t *testing.T) {
	const deadline = 500 * time.Millisecond
	l, _, socket := boundedWorker(t, connlimit.Config{FirstCall: deadline})
	ctx := context.Background()
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(8, 1<<20)
	writeFile(t, c, "/a", data)
	writeFile(t, c, "/b", data)
	if got, err := c.ReadFile(ctx, "/a"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read /a: %v", err)
	}
	refused := dialSocket(t, socket)
	if !askWithoutToken(t, refused) {
		t.Fatal("a request without a token was not answered")
	}
	silent := dialSocket(t, socket)
	for name, conn := range map[string]net.Conn{"silent": silent, "refused": refused} {
		if !connlimittest.ClosedWithin(t, conn, 10*time.Second) {
			t.Fatalf("a %s connection is still open after 10 s (the deadline is %v)", name, deadline)
		}
	}
	// The client's connections, older than the silent one, outlived the
	// deadline: /b's range is lent over one of them.
	before := stats(t, c)
	if got, err := c.ReadFile(ctx, "/b"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read /b: %v", err)
	}
	after := stats(t, c)
	if after.RpcBytesRead != before.RpcBytesRead || after.ShortCircuitOpens == before.ShortCircuitOpens {
		t.Errorf("reading /b after the deadline: %d bytes over RPC and %d short-circuit leases, want none and some",
			after.RpcBytesRead-before.RpcBytesRead, after.ShortCircuitOpens-before.ShortCircuitOpens)
	}
}
