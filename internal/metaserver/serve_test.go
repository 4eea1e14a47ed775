package metaserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestOneCallerSendsNoPings: a lone caller's gRPC calls carry no HTTP/2 PING
// either way. gRPC's dynamic flow-control windows are sized by pinging after
// a message's data whenever the last ping returned, which at one caller is
// on every call: the service and the client fix their windows instead.
func TestOneCallerSendsNoPings(t *testing.T) {
	ctx := context.Background()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tap := &tapListener{Listener: lis}
	cfg := metaserver.Config{DataDir: t.TempDir(), Namespace: statemachine.DefaultConfig(testcluster.Superuser()), NoAuth: true}
	cfg.Store.BlockCacheBytes, cfg.Store.HotBytes = 8<<20, 8<<20
	srv, err := metaserver.Serve(cfg, tap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.ReadyWithDefault(ctx, "file://"+cfg.DataDir+"/bucket"); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{Meta: srv.Addr, User: testcluster.Superuser(), GRPCOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Mkdirs(ctx, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := c.Stat(ctx, "/d"); err != nil {
			t.Fatal(err)
		}
	}
	in, out := tap.bytes()
	// NB: what either side sent before the last answer reached the client
	// is in in and out by now: the service read the last call after all the
	// client had sent before it, and wrote the answer after its own frames.
	if n := pings(t, bytes.TrimPrefix(in, []byte(http2.ClientPreface))); n != 0 {
		t.Errorf("the client sent %d PING frames over 21 calls, want none", n)
	}
	if n := pings(t, out); n != 0 {
		t.Errorf("the service sent %d PING frames over 21 calls, want none", n)
	}
}

// pings counts the PING frames (acknowledgements included) in b, a
// connection's bytes one way, after the client's preface.
func pings(t *testing.T, b []byte) int {
	t.Helper()
	fr := http2.NewFramer(io.Discard, bytes.NewReader(b))
	fr.SetMaxReadFrameSize(16 << 20)
	n := 0
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n
		}
		if err != nil {
			t.Fatalf("reading the connection's frames: %v", err)
		}
		if _, ok := f.(*http2.PingFrame); ok {
			n++
		}
	}
}

// tapListener keeps a copy of the bytes its connections read (in) and wrote
// (out).
type tapListener struct {
	net.Listener
	mu      sync.Mutex
	in, out bytes.Buffer
}

func (l *tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, l: l}, nil
}

func (l *tapListener) bytes() (in, out []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.in.Bytes()), bytes.Clone(l.out.Bytes())
}

type tapConn struct {
	net.Conn
	l *tapListener
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.l.mu.Lock()
	c.l.in.Write(b[:n])
	c.l.mu.Unlock()
	return n, err
}

func (c *tapConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.out.Write(b)
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}
