package worker_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// fakeMember is a member of a namespace service group as a worker's
// heartbeats see it: it leads (leader == "") or answers NOT_LEADER naming
// leader, and signals each heartbeat it takes.
type fakeMember struct {
	pb.UnimplementedMetaServiceServer
	leader string
	beats  chan string // the worker ids heard
}

func (m *fakeMember) Heartbeat(_ context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	select {
	case m.beats <- r.GetWorker().GetId():
	default:
	}
	if m.leader != "" {
		return nil, fserr.NotLeader(m.leader)
	}
	return &pb.HeartbeatResponse{IntervalSeconds: 1}, nil
}

func serveMember(t *testing.T, m *fakeMember) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(rpcerr.ServerOptions()...)
	pb.RegisterMetaServiceServer(g, m)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// A worker given several members heartbeats to each, a dead one holding
// up none of the others, and to the leader a follower names though it
// was not given it (a member added since).
func TestHeartbeatsReachEveryMemberAndTheLeaderNamed(t *testing.T) {
	leader := &fakeMember{beats: make(chan string, 1)}
	leaderAddr := serveMember(t, leader)
	follower := &fakeMember{leader: leaderAddr, beats: make(chan string, 1)}
	followerAddr := serveMember(t, follower)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	state := t.TempDir()
	w, err := worker.New(worker.Config{StateDir: state, Meta: deadAddr + ", " + followerAddr,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 16 << 20}}}})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = w.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); wg.Wait(); w.Close() })
	for name, m := range map[string]*fakeMember{"the follower given": follower, "the leader it named": leader} {
		select {
		case id := <-m.beats:
			if id != w.ID() {
				t.Fatalf("%s heard of worker %q, want %q", name, id, w.ID())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s heard no heartbeat within 30s", name)
		}
	}
}

// A malformed member address fails the worker's start, naming it.
func TestMalformedMemberAddress(t *testing.T) {
	w, err := worker.New(worker.Config{StateDir: t.TempDir(),
		Meta:  "127.0.0.1:7700,127.0.0.1:7701:7702",
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 16 << 20}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	err = w.Serve(context.Background(), lis)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:7701:7702") {
		t.Fatalf("serve: %v, want an error naming the bad address", err)
	}
}
