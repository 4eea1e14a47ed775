package metabench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/user"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Embedded is a namespace service member running in this process, served
// over gRPC on a loopback port, with a block-mode "default" namespace. Its
// durability is the real one (the Raft log is fsynced); only the process
// boundary is missing, which is what lets one CPU profile see the client
// and the service together.
type Embedded struct {
	srv  *metaserver.Server
	grpc *grpc.Server
	addr string
}

// StartEmbedded starts a member on dataDir, serving gRPC with opts (as
// "strata meta" does, by default). The OS user is its superuser, as with
// "strata meta", so a client run by the same user may do anything.
func StartEmbedded(ctx context.Context, dataDir string, opts ...grpc.ServerOption) (*Embedded, error) {
	su := "root"
	if u, err := user.Current(); err == nil {
		su = u.Username
	}
	cfg := metaserver.Config{DataDir: dataDir, Namespace: namespace.DefaultConfig(su),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv, err := metaserver.Open(cfg)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	g := grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20)}, opts...)...)
	pb.RegisterMetaServiceServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	e := &Embedded{srv: srv, grpc: g, addr: lis.Addr().String()}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		e.Close()
		return nil, err
	}
	err = srv.EnsureNamespace(ctx, &pb.NamespaceInfo{Name: namespace.DefaultNamespace,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + dataDir + "/bucket"})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("metabench: create the default namespace: %w", err)
	}
	return e, nil
}

// Addr is the member's gRPC address, host:port.
func (e *Embedded) Addr() string { return e.addr }

// closeTimeout bounds how long Close waits for the member to stop.
const closeTimeout = 5 * time.Second

// Close stops serving and closes the member, waiting at most closeTimeout:
// a member that does not stop must not hang the benchmark's exit (NB: one
// did, while raftnode's run loop waited for a Ready channel the raft
// library never closes).
func (e *Embedded) Close() error {
	e.grpc.Stop()
	done := make(chan error, 1)
	go func() { done <- e.srv.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(closeTimeout):
		return fmt.Errorf("metabench: the embedded member did not stop within %s", closeTimeout)
	}
}
