package testcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/procgroup"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Group is a namespace service of several `strata meta` processes on
// loopback, one Raft group: a procgroup.Group whose members are killed at
// cleanup and whose failures fail the test. Member i (from 1) serves at
// Addrs[i-1] with its state in Dir/m<i>.
type Group struct {
	t       testing.TB
	Dir     string
	Addrs   []string
	pg      *procgroup.Group
	members []*Process
	outs    []*output // what each member logged since its latest start
}

// StartGroup starts a group of n members with a "default" namespace and
// waits until each member serves. extra arguments go to every member.
func StartGroup(t testing.TB, n int, extra ...string) *Group {
	t.Helper()
	return StartGroupAt(t, Placement{Members: n}, extra...)
}

// Placement says where a group's members run.
type Placement struct {
	Members int
	// Addrs and Launch, if set, are the members' addresses and how each is
	// started (procgroup.Config's: on hosts of their own, internal/testhosts).
	Addrs  []string
	Launch func(i int, binary string, args []string, out io.Writer) (*procgroup.Process, error)
	// Restored: the members start from a backup (extra holds
	// --restore-from), which holds the namespaces (procgroup.Config's).
	Restored bool
}

// StartGroupAt starts a group placed so, as StartGroup does.
func StartGroupAt(t testing.TB, p Placement, extra ...string) *Group {
	t.Helper()
	n := p.Members
	g := &Group{t: t, Dir: t.TempDir(), members: make([]*Process, n), outs: make([]*output, n)}
	cfg := procgroup.Config{Binary: Binary(t), Dir: g.Dir, Members: n, Args: extra, Addrs: p.Addrs, Launch: p.Launch, Restored: p.Restored,
		Output: func(i int) (io.Writer, error) {
			g.outs[i-1] = newOutput(false)
			return g.outs[i-1], nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pg, err := procgroup.Start(ctx, cfg)
	if err != nil {
		var logs strings.Builder
		for i, o := range g.outs {
			if o != nil {
				fmt.Fprintf(&logs, "member %d:\n%s", i+1, o.String())
			}
		}
		t.Fatalf("%v\n%s", err, logs.String())
	}
	g.pg, g.Addrs = pg, pg.Addrs()
	if tok, err := pg.AdminToken(ctx); err == nil {
		registerAdmin(tok, g.Addrs...)
	}
	t.Cleanup(func() { // NB: also the members after one that fails to serve below
		for i := 1; i <= n; i++ {
			pg.Kill(i)
		}
	})
	for i := 1; i <= n; i++ {
		g.members[i-1] = serving(t, g.MemberDir(i), pg.Member(i), g.outs[i-1])
	}
	return g
}

// Meta returns every member's address, as clients take them.
func (g *Group) Meta() string { return g.pg.Meta() }

// MemberDir returns member i's data directory.
func (g *Group) MemberDir(i int) string { return g.pg.MemberDir(i) }

// InitialCluster is the group's --initial-cluster: 1=ADDR,2=ADDR,...
func (g *Group) InitialCluster() string { return g.pg.InitialCluster() }

// Start starts (or restarts) member i of the initial group and waits until
// it serves.
func (g *Group) Start(i int, extra ...string) *Process {
	g.t.Helper()
	proc, err := g.pg.Start(i, extra...)
	if err != nil {
		g.t.Fatal(err)
	}
	g.members[i-1] = serving(g.t, g.MemberDir(i), proc, g.outs[i-1])
	return g.members[i-1]
}

// Member returns member i's process (nil if never started).
func (g *Group) Member(i int) *Process { return g.members[i-1] }

// Kill kills member i with SIGKILL.
func (g *Group) Kill(i int) { g.pg.Kill(i) }

// Client returns a client of the whole group as user (the superuser if
// empty), with umask 0, closed at cleanup.
func (g *Group) Client(user string) *client.Client {
	g.t.Helper()
	umask := uint32(0)
	c, err := client.New(client.Config{Meta: g.Meta(), Token: Token(g.t, g.Meta(), user), Umask: &umask,
		RetryTimeout: 2 * time.Minute})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(func() { c.Close() })
	return c
}

// Leader returns the member that leads, waiting for one while members
// answer that there is none.
func (g *Group) Leader(ctx context.Context) (int, error) { return g.pg.Leader(ctx, g.Client("")) }

// CaughtUp waits until every member has applied the leader's commit index
// of the moment.
func (g *Group) CaughtUp(ctx context.Context) error { return g.pg.CaughtUp(ctx, g.Client("")) }

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
		cfg := metaserver.Config{DataDir: t.TempDir(), Namespace: statemachine.DefaultConfig(Superuser()),
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
		out[i] = &InProcess{Server: srv.Server, Member: srv.Member, Addr: srv.Addr, DataDir: cfg.DataDir, Conns: srv.Conns}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range out {
		if err := m.Member.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var addrs []string
	for _, m := range out {
		addrs = append(addrs, m.Addr)
	}
	admin := groupAdminToken(ctx, t, out)
	registerAdmin(admin, addrs...)
	c, err := client.New(client.Config{Meta: strings.Join(addrs, ","), Token: admin})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateNamespace(ctx, &pb.NamespaceInfo{Name: statemachine.DefaultNamespace,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + out[0].DataDir + "/bucket"}); err != nil {
		t.Fatal(err)
	}
	return out
}
