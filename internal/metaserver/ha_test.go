package metaserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/raftnode"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// leaderOf returns the index of the member that leads, polling.
func leaderOf(t *testing.T, members []*testcluster.InProcess, except int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for i, m := range members {
			st, err := m.Server.Status(context.Background(), &pb.StatusRequest{})
			if err == nil && st.Role == "StateLeader" && i != except {
				return i
			}
		}
		time.Sleep(5 * time.Millisecond) // polling for an election, not synchronising
	}
	t.Fatal("no leader within 30s")
	return -1
}

// cuttableGroup starts a group of n members whose Raft links a test can
// cut: every member sends through a raftnode.Cut, and cut sets them all.
func cuttableGroup(t *testing.T, n int) (members []*testcluster.InProcess, cut func(drop func(from, to uint64) bool)) {
	t.Helper()
	cuts := make([]*raftnode.Cut, n)
	members = testcluster.StartInProcessGroup(t, n, func(i int, cfg *metaserver.Config) {
		cfg.WrapSender = func(s raftnode.Sender) raftnode.Sender {
			cuts[i-1] = raftnode.NewCut(s)
			return cuts[i-1]
		}
	})
	return members, func(drop func(from, to uint64) bool) {
		for _, c := range cuts {
			c.Set(drop)
		}
	}
}

func clientOf(t *testing.T, retry time.Duration, members ...*testcluster.InProcess) *client.Client {
	t.Helper()
	var addrs []string
	for _, m := range members {
		addrs = append(addrs, m.Addr)
	}
	meta := strings.Join(addrs, ",")
	c, err := client.New(client.Config{Meta: meta, Token: testcluster.AdminToken(t, meta), RetryTimeout: retry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIsolatedLeaderAcknowledgesNothing cuts the leader's links: it must
// neither acknowledge a write nor answer a read while the majority elects a
// new leader and goes on, and once healed it follows and drops what it
// took meanwhile.
func TestIsolatedLeaderAcknowledgesNothing(t *testing.T) {
	members, cut := cuttableGroup(t, 3)
	ctx := context.Background()
	old := leaderOf(t, members, -1)
	all := clientOf(t, time.Minute, members...)
	if _, err := all.Mkdirs(ctx, "/before", 0o755); err != nil {
		t.Fatal(err)
	}
	oldID := uint64(old + 1)
	cut(func(from, to uint64) bool { return from == oldID || to == oldID })

	isolated := clientOf(t, 0, members[old])
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, werr := isolated.Mkdirs(wctx, "/isolated", 0o755)
	_, rerr := isolated.Stat(wctx, "/before")
	cancel()
	if werr == nil || rerr == nil {
		t.Fatalf("the isolated leader answered: write %v, read %v", werr, rerr)
	}

	var rest []*testcluster.InProcess
	for i, m := range members {
		if i != old {
			rest = append(rest, m)
		}
	}
	majority := clientOf(t, time.Minute, rest...)
	if _, err := majority.Mkdirs(ctx, "/majority", 0o755); err != nil {
		t.Fatalf("the majority did not go on: %v", err)
	}
	if st, _ := members[old].Server.Status(ctx, &pb.StatusRequest{}); st.Role == "StateLeader" {
		// CheckQuorum: a leader that hears from no quorum steps down; it
		// had an election timeout while the majority elected another.
		deadline := time.Now().Add(10 * time.Second)
		for st.Role == "StateLeader" && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // polling for the step-down
			st, _ = members[old].Server.Status(ctx, &pb.StatusRequest{})
		}
		if st.Role == "StateLeader" {
			t.Fatal("the isolated leader never stepped down")
		}
	}

	cut(nil)
	if _, err := all.Mkdirs(ctx, "/after", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/before", "/majority", "/after"} {
		if _, err := all.Stat(ctx, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := all.Stat(ctx, "/isolated"); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("/isolated, never acknowledged, is there: %v", err)
	}
}

// TestRetriedMutationsApplyOnce sends the same request twice, as a client
// does when an answer is lost: the second gets the first's answer, and the
// namespace changes once.
func TestRetriedMutationsApplyOnce(t *testing.T) {
	p := testcluster.StartInProcess(t, nil)
	ctx := p.Context(t, "")
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "c1", RequestId: []byte("request-0000001")}
	mk := &pb.MkdirsRequest{Header: h, Path: "/d", Permission: 0o755, CreateParents: true}
	for i := range 2 {
		h.FirstAttempt = i == 0 // the retry is marked as one, as clients do
		r, err := p.Server.Mkdirs(ctx, mk)
		if err != nil || !r.Created {
			t.Fatalf("mkdir #%d: %v %v (a retry answers as the first did)", i, r, err)
		}
	}
	h2 := &pb.Header{User: h.User, ClientName: "c1", RequestId: []byte("request-0000002")}
	rn := &pb.RenameRequest{Header: h2, Src: "/d", Dst: "/e"}
	for i := range 2 {
		if _, err := p.Server.Rename(ctx, rn); err != nil {
			t.Fatalf("rename #%d: %v", i, err)
		}
	}
	cr := &pb.CreateRequest{Header: &pb.Header{User: h.User, ClientName: "c1", RequestId: []byte("request-0000003")},
		Path: "/e/f", Permission: 0o644}
	first, err := p.Server.Create(ctx, cr)
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.Server.Create(ctx, cr)
	if err != nil || again.Status.InodeId != first.Status.InodeId {
		t.Fatalf("retried create: %v %v, first made inode %d", again, err, first.Status.InodeId)
	}
	// A new request id is a new request: the file exists now.
	cr.Header = &pb.Header{User: h.User, ClientName: "c1", RequestId: []byte("request-0000004")}
	if _, err := p.Server.Create(ctx, cr); !errors.Is(rpcerr.FromStatus(err), fserr.ErrExists) && !errors.Is(rpcerr.FromStatus(err), fserr.ErrLeaseConflict) {
		t.Fatalf("second create of /e/f: %v", err)
	}
	l, err := p.Server.List(ctx, &pb.ListRequest{Header: h, Path: "/"})
	if err == nil { // as a client receives it (the entries are pre-encoded)
		l, err = statemachine.WireForm(l)
	}
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Name != "e" {
		t.Fatalf("root lists %v (%v), want only e", l.GetEntries(), err)
	}
	long := &pb.MkdirsRequest{Header: &pb.Header{User: h.User, RequestId: make([]byte, 65)}, Path: "/x"}
	if _, err := p.Server.Mkdirs(ctx, long); !errors.Is(rpcerr.FromStatus(err), fserr.ErrInvalidArgument) {
		t.Fatalf("65-byte request id: %v", err)
	}
}

// TestMembersApplyWithTheLeadersSettings starts a member whose flags differ
// from the others' (a smaller inline limit, another default block size): it
// applies every command as the leader that proposed it did, so the group's
// copies of the state stay the same. (A member that replays its log after
// a restart with other flags is the same case.)
func TestMembersApplyWithTheLeadersSettings(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	members := testcluster.StartInProcessGroup(t, 3, func(i int, cfg *metaserver.Config) {
		if i == 3 {
			cfg.Namespace.InlineLimit, cfg.Namespace.BlockSize = 16, 1<<20
		}
	})
	c := clientOf(t, time.Minute, members...)
	if l := leaderOf(t, members, -1); l == 2 {
		if err := c.TransferLeader(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	data := strings.Repeat("0123456789", 10)
	// The first write learns the limit; the second is one complete create.
	files := []string{"/learns", "/one-call"}
	for _, p := range files {
		if err := c.WriteFile(ctx, p, []byte(data), client.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.TransferLeader(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for i := 0; leaderOf(t, members, -1) != 2; i++ {
		if i == 1000 {
			t.Fatal("member 3 did not take over")
		}
		time.Sleep(5 * time.Millisecond) // polling for the transfer, not synchronising
	}
	for _, p := range files {
		got, err := c.ReadFile(ctx, p)
		if err != nil || string(got) != data {
			t.Fatalf("%s on member 3: %q, %v", p, got, err)
		}
		if st, err := c.Stat(ctx, p); err != nil || st.BlockSize != 64<<20 {
			t.Fatalf("%s on member 3: %+v, %v; want the block size of the leader that created it", p, st, err)
		}
	}
}

// TestWipedMemberCatchesUpFromSnapshot removes a member, wipes it, adds it
// back and starts it empty while writers keep going: it receives a
// snapshot of the state and then follows the log.
func TestWipedMemberCatchesUpFromSnapshot(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	c := g.Client("")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.Mkdirs(ctx, "/w", 0o755); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	load, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var loadErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; load.Err() == nil; i++ {
			if _, err := c.Mkdirs(load, fmt.Sprintf("/w/d%d", i), 0o755); err != nil {
				if load.Err() == nil {
					loadErr = err
				}
				return
			}
			written.Add(1)
		}
	}()
	for written.Load() < 200 {
		time.Sleep(5 * time.Millisecond) // polling the load's progress
	}
	victim := 3
	if l, _ := g.Leader(ctx); l == victim {
		victim = 2
	}
	if _, err := c.RemoveMember(ctx, uint64(victim), false); err != nil {
		t.Fatal(err)
	}
	g.Kill(victim)
	if err := os.RemoveAll(g.MemberDir(victim)); err != nil {
		t.Fatal(err)
	}
	added := make(chan error, 1)
	go func() {
		_, err := c.AddMember(ctx, uint64(victim), g.Addrs[victim-1], false)
		added <- err
	}()
	p := g.Start(victim, "--join", strings.Join(g.Addrs, ","), "--initial-cluster", "")
	if err := <-added; err != nil {
		t.Fatalf("add member %d: %v\n%s", victim, err, p.Stderr())
	}
	before := written.Load()
	for written.Load() < before+100 {
		time.Sleep(5 * time.Millisecond) // polling the load's progress
	}
	stop()
	wg.Wait()
	if loadErr != nil {
		t.Fatalf("writes failed while the member joined: %v", loadErr)
	}
	if !strings.Contains(p.Stderr(), "restored a snapshot") {
		t.Fatalf("member %d did not restore a snapshot:\n%s", victim, p.Stderr())
	}
	// Let the new member lead: what it serves is what it received.
	if err := c.TransferLeader(ctx, uint64(victim)); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := c.List(ctx, "/w", func(*client.FileStatus) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	// The writer's last mkdir, cut off by stop, may have been applied too.
	if w := written.Load(); int64(n) != w && int64(n) != w+1 {
		t.Fatalf("member %d lists %d directories, %d were acknowledged", victim, n, w)
	}
}

// TestMembersOfAnotherClusterAreRefused starts members that do not belong:
// one with the wrong cluster id, and a removed member restarted on its old
// state. Each exits with an error that says why; the group goes on.
func TestMembersOfAnotherClusterAreRefused(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	c := g.Client("")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	stranger := exec.CommandContext(ctx, testcluster.Binary(t), "meta", "--member-id", "4", "--listen", "127.0.0.1:0",
		"--data-dir", t.TempDir()+"/m4", "--cluster-id", "another", "--join", g.Meta(), "--plaintext")
	out, err := stranger.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `cluster id mismatch`) {
		t.Fatalf("a member of another cluster: %v\n%s", err, out)
	}
	unknown := exec.CommandContext(ctx, testcluster.Binary(t), "meta", "--member-id", "4", "--listen", "127.0.0.1:0",
		"--data-dir", t.TempDir()+"/m4", "--join", g.Meta(), "--plaintext")
	out, err = unknown.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in the configuration") {
		t.Fatalf("a member never added: %v\n%s", err, out)
	}

	victim := 3
	if l, _ := g.Leader(ctx); l == victim {
		victim = 2
	}
	g.Kill(victim)
	if _, err := c.RemoveMember(ctx, uint64(victim), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Mkdirs(ctx, "/after-removal", 0o755); err != nil {
		t.Fatal(err)
	}
	stale := exec.CommandContext(ctx, testcluster.Binary(t), "meta", "--member-id", fmt.Sprint(victim),
		"--listen", g.Addrs[victim-1], "--data-dir", g.MemberDir(victim), "--initial-cluster", g.InitialCluster(), "--plaintext")
	out, err = stale.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not in the configuration") {
		t.Fatalf("a removed member restarted: %v\n%s", err, out)
	}
	if _, err := c.Stat(ctx, "/after-removal"); err != nil {
		t.Fatalf("the group after the refusals: %v", err)
	}
}

// TestKeptAnswersAreForgottenAfterTenMinutes retries requests as the clock
// moves: a retry within ten minutes gets the kept answer, even from a
// leader whose clock is behind the one that applied the first attempt;
// once the leader forgot the answers older than ten minutes, a retry runs
// again (and finds the directory there), while younger answers stay.
func TestKeptAnswersAreForgottenAfterTenMinutes(t *testing.T) {
	var now atomic.Int64
	t0 := time.Date(2026, 11, 22, 12, 0, 30, 0, time.UTC)
	now.Store(t0.UnixMilli())
	at := func(d time.Duration) { now.Store(t0.Add(d).UnixMilli()) }
	p := testcluster.StartInProcess(t, func(cfg *metaserver.Config) {
		cfg.Clock = func() time.Time { return time.UnixMilli(now.Load()) }
	})
	ctx := p.Context(t, "")
	mkdir := func(rid, path string, first bool) bool {
		t.Helper()
		h := &pb.Header{User: testcluster.Superuser(), ClientName: "c1", RequestId: []byte(rid), FirstAttempt: first}
		r, err := p.Server.Mkdirs(ctx, &pb.MkdirsRequest{Header: h, Path: path, Permission: 0o755})
		if err != nil {
			t.Fatalf("mkdir %s (%s): %v", path, rid, err)
		}
		return r.Created
	}
	if !mkdir("old", "/a", true) {
		t.Fatal("/a not created")
	}
	for _, d := range []time.Duration{5 * time.Minute, -3 * time.Minute, 9 * time.Minute} {
		at(d)
		if !mkdir("old", "/a", false) {
			t.Fatalf("a retry %v after the first attempt ran again instead of getting the kept answer", d)
		}
	}
	at(11 * time.Minute)
	if !mkdir("young", "/b", true) {
		t.Fatal("/b not created")
	}
	at(12 * time.Minute)
	if err := p.Member.RunJob(ctx, metaserver.JobForgetRequests); err != nil {
		t.Fatal(err)
	}
	if mkdir("old", "/a", false) {
		t.Fatal("a retry 12 minutes later got an answer that should be forgotten")
	}
	if !mkdir("young", "/b", false) {
		t.Fatal("a retry a minute later ran again: its answer was forgotten too early")
	}
}

// Every member records the workers' heartbeats (followers answer
// NOT_LEADER, naming the leader), so that a member elected leader lists
// the live workers at once, before any worker heartbeats to it again.
func TestNewLeaderKnowsTheWorkers(t *testing.T) {
	now := time.Now() // NB: frozen, so that no worker expires while the test waits for the transfer
	members := testcluster.StartInProcessGroup(t, 3, func(_ int, cfg *metaserver.Config) {
		cfg.Clock = func() time.Time { return now }
	})
	lead := leaderOf(t, members, -1)
	ctx := context.Background()
	hb := &pb.HeartbeatRequest{Worker: &pb.WorkerInfo{Id: "w-test", Address: "127.0.0.1:1"}}
	for i, m := range members {
		_, err := m.Server.Heartbeat(m.Context(t, testcluster.Superuser()), hb)
		switch {
		case i == lead && err != nil:
			t.Fatalf("the leader refused a heartbeat: %v", err)
		case i != lead && (!errors.Is(err, fserr.ErrNotLeader) || fserr.LeaderOf(err) != members[lead].Addr):
			t.Fatalf("a follower answered a heartbeat with %v, want NOT_LEADER naming %s", err, members[lead].Addr)
		}
	}
	next := (lead + 1) % len(members)
	if err := clientOf(t, 30*time.Second, members...).TransferLeader(ctx, uint64(next+1)); err != nil {
		t.Fatal(err)
	}
	if got := leaderOf(t, members, lead); got != next {
		t.Fatalf("member %d leads, want %d", got+1, next+1)
	}
	r, err := members[next].Server.ListWorkers(members[next].Context(t, testcluster.Superuser()), &pb.ListWorkersRequest{})
	if err != nil || len(r.Workers) != 1 || r.Workers[0].Id != "w-test" {
		t.Fatalf("the new leader lists %v (%v), want the worker that heartbeated", r.GetWorkers(), err)
	}
}
