package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/callwire"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/loopback"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// fakeMember answers Status: as member 1, or, if it names a leader, with
// NOT_LEADER and that leader's address.
type fakeMember struct {
	pb.UnimplementedMetaServiceServer
	leader string
}

func (m fakeMember) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	if m.leader != "" {
		return nil, rpcerr.ToStatus(fserr.NotLeader(m.leader))
	}
	return &pb.StatusResponse{MemberId: 1}, nil
}

// serveMember serves m over gRPC and callwire, as a member does.
func serveMember(t *testing.T, lis net.Listener, m fakeMember) {
	srv := grpc.NewServer()
	pb.RegisterMetaServiceServer(srv, m)
	cw := callwire.NewServer(&pb.MetaService_ServiceDesc, m, nil, nil)
	go func() { _ = srv.Serve(cw.Split(lis)) }()
	t.Cleanup(func() { srv.Stop(); cw.Close() })
}

// A client whose leader is a member that was down for many connection
// attempts (gRPC's default backoff would then wait 8 s or more before the
// next) reaches it within its bound once it serves again: a member back
// from a long outage, then elected, is not out of the clients' reach.
func TestClientReachesALeaderBackFromALongOutage(t *testing.T) {
	down, err := loopback.NewOutage()
	if err != nil {
		t.Fatal(err)
	}
	serveMember(t, down, fakeMember{})
	follower, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveMember(t, follower, fakeMember{leader: down.Addr().String()})
	c, err := client.New(client.Config{Meta: follower.Addr().String() + "," + down.Addr().String(), RetryTimeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type answer struct {
		st  *pb.StatusResponse
		err error
	}
	got := make(chan answer, 1)
	go func() {
		st, err := c.Status(ctx) // retried, follower to leader, until the leader answers
		got <- answer{st, err}
	}()

	const downAttempts = 6
	outage := time.After(time.Minute)
	for i := range downAttempts {
		select {
		case <-down.Attempts():
		case a := <-got:
			t.Fatalf("Status ended while the leader was down: %v %v", a.st, a.err)
		case <-outage:
			t.Fatalf("%d connection attempts to the leader in a minute, want %d", i, downAttempts)
		}
	}
	down.Up()
	bound := 4 * time.Second // the client's bound and time to spare; gRPC's default waits 8 s or more
	select {
	case a := <-got:
		if a.err != nil || a.st.GetMemberId() != 1 {
			t.Fatalf("Status once the leader is back: %v %v", a.st, a.err)
		}
	case <-time.After(bound):
		t.Fatalf("the leader, back after %d failed connection attempts, was not reached within %v", downAttempts, bound)
	}
}
