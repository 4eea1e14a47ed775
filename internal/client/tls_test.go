package client_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/tlsconf"
	"github.com/stratafs/strata/internal/token"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// tlsCluster is a namespace service and a worker serving TLS with the
// certificate of a CA of the test's own, the worker connecting to the
// service with it (mutual TLS).
type tlsCluster struct {
	files tlsconf.Files
	addr  string
}

func startTLS(t *testing.T) *tlsCluster {
	t.Helper()
	files, server := testcluster.DevTLS(t)
	peer, err := files.Client()
	if err != nil {
		t.Fatal(err)
	}
	svc := testcluster.StartInProcess(t, func(c *metaserver.Config) { c.TLS, c.PeerTLS = server, peer })
	w, err := worker.New(worker.Config{StateDir: t.TempDir(), Meta: svc.Addr, TLS: server, MetaTLS: peer,
		Token: testcluster.AdminToken(t, svc.Addr),
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 64 << 20}}}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done; w.Close() })
	tc := &tlsCluster{files: files, addr: svc.Addr}
	c := tc.client(t, tlsconf.Files{CA: files.CA})
	for range 1000 {
		if st, err := c.WorkerStats(ctx); err == nil && len(st) > 0 {
			return tc
		}
		time.Sleep(10 * time.Millisecond) // the worker's first heartbeat, in another goroutine
	}
	t.Fatal("the worker did not register over TLS")
	return nil
}

// client returns a client with TLS files f.
func (tc *tlsCluster) client(t *testing.T, f tlsconf.Files) *client.Client {
	t.Helper()
	cfg, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	return tc.clientWith(t, &client.Config{TLS: cfg})
}

func (tc *tlsCluster) clientWith(t *testing.T, cfg *client.Config) *client.Client {
	t.Helper()
	cfg.Meta, cfg.Token, cfg.ConnectTimeout = tc.addr, testcluster.AdminToken(t, tc.addr), time.Second
	c, err := client.New(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A client with the cluster's CA writes and reads a file over TLS, to the
// service and to the worker, whose heartbeats go over mutual TLS.
func TestTLSClientWithTheCA(t *testing.T) {
	tc := startTLS(t)
	c := tc.client(t, tlsconf.Files{CA: tc.files.CA})
	ctx := context.Background()
	data := bytes.Repeat([]byte("over tls"), 1<<17)
	w, err := c.Create(ctx, "/f", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadFile(ctx, "/f")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back over TLS: %v", err)
	}
}

// A client that does not trust the cluster's CA cannot connect, and says
// why; nor can a plaintext one.
func TestTLSRefusesClientsWithoutTheCAOrInPlaintext(t *testing.T) {
	tc := startTLS(t)
	ctx := context.Background()
	for name, c := range map[string]struct {
		c    *client.Client
		want string
	}{
		"system roots": {tc.client(t, tlsconf.Files{}), "not signed by a CA this client trusts"},
		"another CA":   {tc.client(t, tlsconf.Files{CA: otherCA(t)}), "not signed by a CA this client trusts"},
		"plaintext":    {tc.clientWith(t, &client.Config{}), "speaks TLS and this client connects in plaintext"},
	} {
		_, err := c.c.Stat(ctx, "/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
}

// otherCA is the certificate file of a CA the cluster does not know.
func otherCA(t *testing.T) string {
	f, _ := testcluster.DevTLS(t)
	return f.CA
}

// Heartbeats, whose answers carry the block token keys, need a certificate
// signed by the cluster's CA: a client with the CA alone is refused.
func TestTLSHeartbeatNeedsAClientCertificate(t *testing.T) {
	tc := startTLS(t)
	hb := &pb.HeartbeatRequest{Worker: &pb.WorkerInfo{Id: "w-impostor", Address: "127.0.0.1:1"}}
	dial := func(f tlsconf.Files) pb.MetaServiceClient {
		cfg, err := f.Client()
		if err != nil {
			t.Fatal(err)
		}
		// With the superuser's token: what refuses is the missing certificate.
		conn, err := grpc.NewClient(tc.addr, tlsconf.Dial(cfg),
			grpc.WithPerRPCCredentials(token.Credentials(testcluster.AdminToken(t, tc.addr))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return pb.NewMetaServiceClient(conn)
	}
	ctx := context.Background()
	_, err := dial(tlsconf.Files{CA: tc.files.CA}).Heartbeat(ctx, hb)
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a heartbeat without a client certificate: %v", err)
	}
	resp, err := dial(tc.files).Heartbeat(ctx, hb)
	if err != nil || len(resp.BlockKeys) != 3 {
		t.Fatalf("a heartbeat with the cluster's certificate: %v, %d keys", err, len(resp.GetBlockKeys()))
	}
}
