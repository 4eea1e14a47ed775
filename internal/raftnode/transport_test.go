package raftnode

import (
	"net"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/loopback"
	spb "github.com/stratafs/strata/proto/strata/v1"
)

// stuckReceiver takes a StepStream and never reads it, as a member that
// hangs; refusing receivers end the stream at the first request.
type stuckReceiver struct {
	spb.UnimplementedRaftServiceServer
	refuse bool
}

func (r stuckReceiver) StepStream(s spb.RaftService_StepStreamServer) error {
	if r.refuse {
		if _, err := s.Recv(); err != nil {
			return err
		}
		return status.Error(codes.FailedPrecondition, "not in the configuration")
	}
	<-s.Context().Done()
	return s.Context().Err()
}

func dialReceiver(t *testing.T, r stuckReceiver) spb.RaftServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	spb.RegisterRaftServiceServer(srv, r)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return spb.NewRaftServiceClient(conn)
}

// A member that stops reading its stream holds a send for sendTimeout at
// most: the sender gives the stream up (and opens another for the next
// batch) instead of waiting on it for ever.
func TestStepStreamGivesUpOnAReceiverThatStopsReading(t *testing.T) {
	defer func(d time.Duration) { sendTimeout = d }(sendTimeout)
	sendTimeout = 200 * time.Millisecond
	s := openStepStream(dialReceiver(t, stuckReceiver{}))
	req := &spb.StepRequest{Messages: [][]byte{make([]byte, 256<<10)}}
	for i := 0; ; i++ {
		err := s.send(req)
		if err == nil {
			continue // buffered until the flow-control windows are full
		}
		if status.Code(err) != codes.Canceled {
			t.Fatalf("send %d: %v, want the stream given up (Canceled)", i, err)
		}
		return
	}
}

// A receiver's refusal reaches the sender as the receiver's status: the
// first send after the refusal arrived fails with it.
func TestStepStreamReportsARefusal(t *testing.T) {
	s := openStepStream(dialReceiver(t, stuckReceiver{refuse: true}))
	req := &spb.StepRequest{Messages: [][]byte{[]byte("m")}}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		err := s.send(req)
		if err == nil {
			if time.Now().After(deadline) {
				t.Fatalf("%d sends in 10s after the refusal went through", i)
			}
			continue
		}
		if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != "not in the configuration" {
			t.Fatalf("send %d: %v, want the refusal", i, err)
		}
		return
	}
}

// A member that takes connections and never answers (a host gone silent)
// holds the opening of a stream for sendTimeout at most.
func TestStepStreamGivesUpOpeningToASilentMember(t *testing.T) {
	defer func(d time.Duration) { sendTimeout = d }(sendTimeout)
	sendTimeout = 200 * time.Millisecond
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered, until the test ends
		}
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := openStepStream(spb.NewRaftServiceClient(conn))
	if err := s.send(&spb.StepRequest{}); status.Code(err) != codes.Canceled {
		t.Fatalf("send on a stream to a silent member: %v, want Canceled", err)
	}
}

// countingReceiver reports every StepStream request it receives.
type countingReceiver struct {
	spb.UnimplementedRaftServiceServer
	got chan struct{}
}

func (r countingReceiver) StepStream(s spb.RaftService_StepStreamServer) error {
	for {
		if _, err := s.Recv(); err != nil {
			return err
		}
		select {
		case r.got <- struct{}{}:
		default:
		}
	}
}

// A member down for long enough that gRPC's default backoff would have
// grown to seconds between connection attempts (the sixth attempt comes
// 9 s after the first, the seventh 8 to 13 s after that) is reached within
// the transport's bound (maxConnectBackoff, plus jitter) once it serves
// again: the first message after it is back is delivered well before the
// default backoff would have tried again.
func TestTransportReachesAMemberBackFromALongOutage(t *testing.T) {
	lis, err := loopback.NewOutage()
	if err != nil {
		t.Fatal(err)
	}
	recv := countingReceiver{got: make(chan struct{}, 1)}
	srv := grpc.NewServer()
	spb.RegisterRaftServiceServer(srv, recv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	members := map[uint64]string{1: "127.0.0.1:1", 2: lis.Addr().String()}
	tr, err := NewTransport(TransportConfig{ClusterID: "test", ID: 1, Address: members[1],
		Members: func() map[uint64]string { return members }, SnapshotDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	// Raft heartbeats each member every tick; so does this, until the end.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			tr.Send([]*pb.Message{{Type: pb.MessageType_MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2)}})
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); <-done }()

	const downAttempts = 6
	outage := time.After(time.Minute)
	for i := range downAttempts {
		select {
		case <-lis.Attempts():
		case <-outage:
			t.Fatalf("%d connection attempts to the member in a minute, want %d", i, downAttempts)
		}
	}
	lis.Up()
	// The bound: maxConnectBackoff and its jitter, and time to spare for a
	// loaded machine; gRPC's default would wait 8 s or more.
	bound := 4 * time.Second
	select {
	case <-recv.got:
	case <-time.After(bound):
		t.Fatalf("the member, back after %d failed connection attempts, heard nothing within %v", downAttempts, bound)
	}
}
