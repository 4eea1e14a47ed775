package metaserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/tlsconf"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The service's unary methods over callwire (internal/callwire), on the
// gRPC port: the same handlers, authentication and errors as over gRPC.

const (
	getFileStatus = "/strata.v1.MetaService/GetFileStatus"
	mkdirs        = "/strata.v1.MetaService/Mkdirs"
	batch         = "/strata.v1.MetaService/Batch"
)

func dialCallWire(t testing.TB, addr, tok string) *callwire.Conn {
	t.Helper()
	c, err := callwire.Dial(context.Background(), addr, nil, tok)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCallWireAnswersAsGRPC(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	tok := testcluster.AdminToken(t, svc.Addr)
	g := rawMeta(t, svc.Addr, tok)
	cw := dialCallWire(t, svc.Addr, tok)

	var made pb.MkdirsResponse
	if err := cw.Invoke(ctx, mkdirs, &pb.MkdirsRequest{Header: &pb.Header{RequestId: []byte("callwire-mkdirs-1")},
		Path: "/a/b", Permission: 0o755, CreateParents: true}, &made); err != nil {
		t.Fatal(err)
	}
	req := &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/a/b"}
	want, err := g.GetFileStatus(ctx, req)
	if err != nil {
		t.Fatalf("the directory made over callwire, over gRPC: %v", err)
	}
	var got pb.GetFileStatusResponse
	if err := cw.Invoke(ctx, getFileStatus, req, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Fatalf("over callwire %v, over gRPC %v", &got, want)
	}

	// An error: the same status, code, message and details.
	missing := &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/a/nope"}
	_, gerr := g.GetFileStatus(ctx, missing)
	cerr := cw.Invoke(ctx, getFileStatus, missing, &got)
	if !errors.Is(rpcerr.FromStatus(cerr), fserr.ErrNotFound) || !proto.Equal(status.Convert(cerr).Proto(), status.Convert(gerr).Proto()) {
		t.Fatalf("over callwire %v, over gRPC %v", cerr, gerr)
	}

	// A batch, its results in order; the connection serves call after call.
	var br pb.BatchResponse
	if err := cw.Invoke(ctx, batch, &pb.BatchRequest{Calls: []*pb.BatchCall{
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: req}},
		{Call: &pb.BatchCall_GetFileStatus{GetFileStatus: missing}}}}, &br); err != nil {
		t.Fatal(err)
	}
	if len(br.Results) != 2 || !proto.Equal(br.Results[0].GetGetFileStatus(), want) || len(br.Results[1].GetError()) == 0 {
		t.Fatalf("batch answered %v", &br)
	}
}

func TestCallWireAuthenticates(t *testing.T) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(t, nil)
	var got pb.GetFileStatusResponse
	req := &pb.GetFileStatusRequest{Header: &pb.Header{User: testcluster.Superuser()}, Path: "/"}

	err := dialCallWire(t, svc.Addr, "").Invoke(ctx, getFileStatus, req, &got)
	wantUnauthenticated(t, "a call without a token", err)
	if !strings.Contains(err.Error(), "strata admin token create") {
		t.Fatalf("the error does not say what to do: %v", err)
	}
	err = dialCallWire(t, svc.Addr, "not-a-token").Invoke(ctx, getFileStatus, req, &got)
	wantUnauthenticated(t, "a call with a malformed token", err)

	// The token says who calls.
	alice := dialCallWire(t, svc.Addr, testcluster.Token(t, svc.Addr, "alice", "users"))
	var who pb.WhoAmIResponse
	if err := alice.Invoke(ctx, "/strata.v1.MetaService/WhoAmI", &pb.WhoAmIRequest{}, &who); err != nil {
		t.Fatal(err)
	}
	if who.GetUser() != "alice" {
		t.Fatalf("alice's token: the service took the caller for %q", who.GetUser())
	}

	// Heartbeats are the members' and workers': gRPC only.
	err = dialCallWire(t, svc.Addr, testcluster.AdminToken(t, svc.Addr)).Invoke(ctx, "/strata.v1.MetaService/Heartbeat",
		&pb.HeartbeatRequest{}, &pb.HeartbeatResponse{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("a heartbeat over callwire: %v, want UNIMPLEMENTED", err)
	}
}

func TestCallWireOverTLS(t *testing.T) {
	ctx := context.Background()
	files, server := testcluster.DevTLS(t)
	svc := testcluster.StartInProcess(t, func(c *metaserver.Config) { c.TLS = server })
	tok := testcluster.AdminToken(t, svc.Addr)
	clientTLS, err := tlsconf.Files{CA: files.CA}.Client()
	if err != nil {
		t.Fatal(err)
	}
	c, err := callwire.Dial(ctx, svc.Addr, clientTLS, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got pb.GetFileStatusResponse
	if err := c.Invoke(ctx, getFileStatus, &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.GetStatus().GetType() != pb.FileType_FILE_TYPE_DIRECTORY {
		t.Fatalf("/ over TLS: %v", &got)
	}

	// Plaintext to a TLS service: refused, saying why.
	err = dialCallWire(t, svc.Addr, tok).Invoke(ctx, getFileStatus, &pb.GetFileStatusRequest{Path: "/"}, &got)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "serves TLS only") {
		t.Fatalf("a plaintext connection to a TLS service: %v", err)
	}
	// A certificate of another CA: the handshake fails.
	other, _ := testcluster.DevTLS(t)
	otherTLS, err := tlsconf.Files{CA: other.CA}.Client()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := callwire.Dial(ctx, svc.Addr, otherTLS, tok); err == nil {
		c.Close()
		t.Fatal("a client trusting another CA connected")
	}
}

// BenchmarkTransports is one caller's getFileStatus over gRPC and over
// callwire, to a service in this process: the round trip each transport
// adds to the same handler.
func BenchmarkTransports(b *testing.B) {
	ctx := context.Background()
	svc := testcluster.StartInProcess(b, nil)
	tok := testcluster.AdminToken(b, svc.Addr)
	req := &pb.GetFileStatusRequest{Header: &pb.Header{}, Path: "/"}
	b.Run("grpc", func(b *testing.B) {
		g := rawMeta(b, svc.Addr, tok)
		for b.Loop() {
			if _, err := g.GetFileStatus(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("callwire", func(b *testing.B) {
		c := dialCallWire(b, svc.Addr, tok)
		var resp pb.GetFileStatusResponse
		for b.Loop() {
			if err := c.Invoke(ctx, getFileStatus, req, &resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}
