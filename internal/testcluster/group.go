package testcluster

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/loopback"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Group is a namespace service of several `strata meta` processes on
// loopback, one Raft group. Member i (from 1) serves at Addrs[i-1] with its
// state in Dir/m<i>.
type Group struct {
	t       testing.TB
	Dir     string
	Addrs   []string
	members []*Process
	extra   []string
}

// StartGroup starts a group of n members with a "default" namespace and
// waits until it has a leader. extra arguments go to every member.
func StartGroup(t testing.TB, n int, extra ...string) *Group {
	t.Helper()
	g := &Group{t: t, Dir: t.TempDir(), extra: extra, members: make([]*Process, n)}
	addrs, err := loopback.FreeAddrs(n)
	if err != nil {
		t.Fatal(err)
	}
	g.Addrs = addrs
	for i := 1; i <= n; i++ {
		g.Start(i)
	}
	c := g.Client("")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.CreateNamespace(ctx, namespace.DefaultNamespace, pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "file://"+filepath.Join(g.Dir, "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Meta returns every member's address, as clients take them.
func (g *Group) Meta() string { return strings.Join(g.Addrs, ",") }

// MemberDir returns member i's data directory.
func (g *Group) MemberDir(i int) string { return filepath.Join(g.Dir, fmt.Sprintf("m%d", i)) }

// InitialCluster is the group's --initial-cluster: 1=ADDR,2=ADDR,...
func (g *Group) InitialCluster() string {
	var initial []string
	for j, a := range g.Addrs {
		initial = append(initial, fmt.Sprintf("%d=%s", j+1, a))
	}
	return strings.Join(initial, ",")
}

// Start starts (or restarts) member i of the initial group.
func (g *Group) Start(i int, extra ...string) *Process {
	g.t.Helper()
	args := append([]string{"meta", "--member-id", fmt.Sprint(i), "--listen", g.Addrs[i-1],
		"--data-dir", g.MemberDir(i), "--initial-cluster", g.InitialCluster()}, g.extra...)
	p := run(g.t, g.MemberDir(i), append(args, extra...), false)
	g.members[i-1] = p
	return p
}

// Member returns member i's process (nil if never started).
func (g *Group) Member(i int) *Process { return g.members[i-1] }

// Kill kills member i with SIGKILL.
func (g *Group) Kill(i int) { g.members[i-1].Kill() }

// Client returns a client of the whole group as user (the superuser if
// empty), with umask 0, closed at cleanup.
func (g *Group) Client(user string) *client.Client {
	g.t.Helper()
	if user == "" {
		user = Superuser()
	}
	umask := uint32(0)
	c, err := client.New(client.Config{Meta: g.Meta(), User: user, Umask: &umask, RetryTimeout: 2 * time.Minute})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { c.Close() })
	return c
}

// Leader returns the member that leads, waiting for one while members
// answer that there is none.
func (g *Group) Leader(ctx context.Context) (int, error) {
	c := g.Client("")
	for {
		for _, st := range c.MemberStatuses(ctx) {
			if st.Err == nil && st.Status.Role == "StateLeader" {
				for i, a := range g.Addrs {
					if a == st.Address {
						return i + 1, nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no leader: %w", fserr.ErrUnavailable)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// StartInProcessGroup starts a group of n members inside the test process,
// each serving gRPC on loopback, with a "default" namespace; a test reaches
// the members' transports (to cut links) through Server.Transport.
// configure, if not nil, changes member i's (from 1) configuration.
func StartInProcessGroup(t testing.TB, n int, configure func(i int, cfg *metaserver.Config)) []*InProcess {
	t.Helper()
	initial := map[uint64]string{}
	lis := make([]net.Listener, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[i], initial[uint64(i+1)] = l, l.Addr().String()
	}
	out := make([]*InProcess, n)
	for i := range n {
		cfg := metaserver.Config{DataDir: t.TempDir(), Namespace: namespace.DefaultConfig(Superuser()),
			MemberID: uint64(i + 1), Address: initial[uint64(i+1)], InitialMembers: initial, Tick: 20 * time.Millisecond}
		cfg.Store.BlockCacheBytes, cfg.Store.HotBytes = 8<<20, 8<<20
		if configure != nil {
			configure(i+1, &cfg)
		}
		srv, err := metaserver.Serve(cfg, lis[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		out[i] = &InProcess{Server: srv.Server, Addr: srv.Addr, DataDir: cfg.DataDir}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range out {
		if err := m.Server.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var addrs []string
	for _, m := range out {
		addrs = append(addrs, m.Addr)
	}
	c, err := client.New(client.Config{Meta: strings.Join(addrs, ","), User: Superuser()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateNamespace(ctx, namespace.DefaultNamespace, pb.NamespaceMode_NAMESPACE_MODE_BLOCK, "file://"+out[0].DataDir+"/bucket"); err != nil {
		t.Fatal(err)
	}
	return out
}
