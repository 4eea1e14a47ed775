package raftnode

import (
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

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
