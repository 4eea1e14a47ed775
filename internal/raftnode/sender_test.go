package raftnode

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	spb "github.com/stratafs/strata/proto/strata/v1"
)

// senders are the Sender implementations the conformance tests run on.
var senders = map[string]func(t *testing.T, size int) testNetwork{
	"MemNetwork": func(t *testing.T, _ int) testNetwork { return memTestNetwork{NewMemNetwork(t.TempDir())} },
	"Transport":  newGRPCTestNetwork,
}

// The conformance test of Sender: a group replicates over it, and a member
// that was down while the others compacted their log past its end catches
// up from a snapshot sent through it when it starts again.
func TestSenderConformance(t *testing.T) {
	for name, newNetwork := range senders {
		t.Run(name, func(t *testing.T) {
			g := newTestGroup(t, newNetwork(t, 3), 3, Config{CompactEvery: 20, CompactKeep: 5})
			lagging := uint64(3)
			testSnapshotCatchUp(t, g, lagging,
				func() { g.stop(lagging) },
				func() { g.start(lagging) })
		})
	}
}

// grpcTestNetwork connects members with Transports over gRPC on loopback
// sockets. Each member's server outlives its Transport, so that a member
// started again keeps its address.
type grpcTestNetwork struct {
	dir    string
	addrs  map[uint64]string // never modified once built
	relays map[uint64]*raftRelay
}

func newGRPCTestNetwork(t *testing.T, size int) testNetwork {
	nw := &grpcTestNetwork{dir: t.TempDir(), addrs: map[uint64]string{}, relays: map[uint64]*raftRelay{}}
	for i := range size {
		id := uint64(i + 1)
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		nw.relays[id] = &raftRelay{}
		spb.RegisterRaftServiceServer(srv, nw.relays[id])
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		nw.addrs[id] = lis.Addr().String()
	}
	return nw
}

func (nw *grpcTestNetwork) join(id uint64, sm *memState) (Sender, func(*Node), func(), error) {
	tr, err := NewTransport(TransportConfig{ClusterID: "test", ID: id, Address: nw.addrs[id],
		Members: func() map[uint64]string { return nw.addrs }, Checkpoint: sm.Checkpoint,
		SnapshotDir: filepath.Join(nw.dir, strconv.FormatUint(id, 10))})
	if err != nil {
		return nil, nil, nil, err
	}
	nw.relays[id].to.Store(tr)
	return tr, tr.Attach, tr.Close, nil
}

// raftRelay serves RaftService with the member's current Transport.
type raftRelay struct {
	spb.UnimplementedRaftServiceServer
	to atomic.Pointer[Transport]
}

var errNoTransport = status.Error(codes.Unavailable, "member is not started")

func (r *raftRelay) Step(ctx context.Context, req *spb.StepRequest) (*spb.StepResponse, error) {
	if t := r.to.Load(); t != nil {
		return t.Step(ctx, req)
	}
	return nil, errNoTransport
}

func (r *raftRelay) StepStream(s spb.RaftService_StepStreamServer) error {
	if t := r.to.Load(); t != nil {
		return t.StepStream(s)
	}
	return errNoTransport
}

func (r *raftRelay) InstallSnapshot(s grpc.ClientStreamingServer[spb.SnapshotChunk, spb.StepResponse]) error {
	if t := r.to.Load(); t != nil {
		return t.InstallSnapshot(s)
	}
	return errNoTransport
}
