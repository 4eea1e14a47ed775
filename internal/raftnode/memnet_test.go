package raftnode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// proposers propose commands to each member of a group for as long as it
// leads, and record how each proposal went.
type proposers struct {
	cut atomic.Bool // the test cut the network: proposals from now on are after the cut
	// end cancels ctx, which also ends a proposal waiting for its member
	// to know a leader, and waits for the proposers on wg.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu struct {
		sync.Mutex
		results []proposal
	}
}

type proposal struct {
	cmd      string
	member   uint64
	afterCut bool
	err      error
}

// startProposers starts a proposer on each member of g. Each proposes one
// command per 2 ms while its member leads, so that some are always in
// flight (Propose returns once the leader took the command, before it
// commits). They stop at the latest when the test ends, before its
// members do.
func startProposers(g *testGroup) *proposers {
	p := &proposers{}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	g.t.Cleanup(func() { p.end() })
	for id, m := range g.members {
		p.wg.Add(1)
		go p.run(id, m.node)
	}
	return p
}

func (p *proposers) run(id uint64, n *Node) {
	defer p.wg.Done()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		}
		if _, leads := n.Leader(); !leads {
			continue
		}
		r := proposal{cmd: fmt.Sprintf("p%d-%d", id, seq), member: id, afterCut: p.cut.Load()}
		r.err = n.Propose(p.ctx, []byte(r.cmd))
		if p.ctx.Err() != nil {
			return // whether the member took it is not known
		}
		p.mu.Lock()
		p.mu.results = append(p.mu.results, r)
		p.mu.Unlock()
	}
}

// count returns how many proposals f holds for.
func (p *proposers) count(f func(proposal) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.mu.results {
		if f(r) {
			n++
		}
	}
	return n
}

// end stops the proposers and returns how their proposals went.
func (p *proposers) end() []proposal {
	p.cancel()
	p.wg.Wait()
	return p.mu.results
}

// A leader partitioned away while proposals stream in goes on taking them
// until it notices (CheckQuorum), while the others elect a leader that
// takes more. Every proposal is applied once by every member or by none:
// what the old leader took after the cut never is, and what a member
// refused neither; the old leader drops its tail once healed.
func TestLeaderChangeDuringProposals(t *testing.T) {
	g, nw := newMemGroup(t, 3, Config{})
	old := g.leader()
	p := startProposers(g)
	applied := func(id uint64) int { cmds, _ := g.members[id].sm.commands(); return len(cmds) }
	waitFor(t, "20 commands applied by every member", func() bool {
		return applied(1) >= 20 && applied(2) >= 20 && applied(3) >= 20
	})

	nw.Partition([]uint64{old})
	p.cut.Store(true)
	next := g.leader(old)
	before := applied(next)
	waitFor(t, "the majority goes on, the old leader steps down having taken proposals after the cut", func() bool {
		_, leads := g.members[old].node.Leader()
		return !leads && applied(next) >= before+20 &&
			p.count(func(r proposal) bool { return r.member == old && r.afterCut && r.err == nil }) > 0
	})
	nw.Heal()
	waitFor(t, "the old leader follows the new one", func() bool {
		lead, _ := g.members[old].node.Leader()
		return lead != 0 && lead != old
	})
	results := p.end()
	cmds := g.converge()

	lost := 0
	for _, r := range results {
		in := slices.Contains(cmds, r.cmd)
		switch {
		case r.err != nil && in:
			t.Errorf("%s was applied, but member %d refused it: %v", r.cmd, r.member, r.err)
		case r.err != nil && !errors.Is(r.err, ErrNotLeader):
			t.Errorf("proposing %s to member %d: %v", r.cmd, r.member, r.err)
		case r.err == nil && r.member == old && r.afterCut:
			if in {
				t.Errorf("%s was applied, but the isolated leader took it", r.cmd)
			}
			lost++
		}
	}
	t.Logf("%d proposals, %d applied, %d taken by the isolated leader and lost", len(results), len(cmds), lost)
}

// A member cut off while the others compact their log past its end catches
// up, once the network heals, from a snapshot (a checkpoint of the leader's
// state moved through the MemNetwork) and from the log after it.
func TestSnapshotToAPartitionedMember(t *testing.T) {
	g, nw := newMemGroup(t, 3, Config{CompactEvery: 20, CompactKeep: 5})
	lagging := g.leader() // so that the other two elect another
	testSnapshotCatchUp(t, g, lagging,
		func() { nw.Partition([]uint64{lagging}) },
		nw.Heal)
}

// testSnapshotCatchUp cuts member lagging off, proposes until the leader's
// log starts past the lagging member's end, brings it back and checks that
// it restored a snapshot and applied what the others did.
func testSnapshotCatchUp(t *testing.T, g *testGroup, lagging uint64, cut, heal func()) {
	g.propose(commands("a", 30)...)
	g.converge()
	end := g.members[lagging].node.LastIndex()
	cut()
	g.away[lagging] = true
	lead := g.leader()
	round := 0
	waitFor(t, "the leader compacts its log past the lagging member's end", func() bool {
		round++
		g.propose(commands(fmt.Sprintf("b%d-", round), 10)...)
		first, err := g.members[lead].node.log.mem.FirstIndex()
		return err == nil && first > end+1
	})
	heal()
	// The lagging member may have led, and may lead still: a proposal it
	// takes would be lost.
	waitFor(t, "the lagging member follows", func() bool {
		lead, _ := g.members[lagging].node.Leader()
		return lead != 0 && lead != lagging
	})
	delete(g.away, lagging)
	cmds := g.converge()
	if got, restores := g.members[lagging].sm.commands(); restores == 0 {
		t.Fatalf("member %d caught up without a snapshot", lagging)
	} else if !slices.Equal(got, cmds) {
		t.Fatalf("member %d applied %q, the others %q", lagging, got, cmds)
	}
}

// A member whose state machine crashes in the middle of an Apply stops;
// started again from its directories (the log, and the state as it was
// after its last whole Apply), it applies the rest of the log, skipping
// what its state has already, and ends with the others' state. The others
// keep enough log for it to need no snapshot.
func TestRestartAfterACrashInTheMiddleOfAnApply(t *testing.T) {
	g, _ := newMemGroup(t, 3, Config{CompactEvery: 20, CompactKeep: 100})
	g.propose(commands("a", 30)...)
	g.converge()
	victim := uint64(1)
	if lead := g.leader(); lead == victim {
		victim = 2
	}
	g.members[victim].sm.crashOn("crash")
	g.propose(append(append(commands("b", 10), "crash"), commands("c", 10)...)...)
	n := g.members[victim].node
	<-n.Done()
	if !errors.Is(n.Err(), errCrash) {
		t.Fatalf("member %d stopped with %v, want the crash", victim, n.Err())
	}
	g.stop(victim)
	g.propose(commands("d", 30)...) // the others go on without it
	g.start(victim)
	cmds := g.converge()
	if !slices.Contains(cmds, "crash") || !slices.Contains(cmds, "d29") {
		t.Fatalf("applied %q, want crash and d29 among them", cmds)
	}
	if _, restores := g.members[victim].sm.commands(); restores != 0 {
		t.Fatalf("member %d restored %d snapshots: the test wants it to replay its log", victim, restores)
	}
}

// A member that restored a snapshot drops the directories of the ones no
// newer, and keeps a newer one, which raft may hand it next.
func TestRemoveReceivedKeepsNewerSnapshots(t *testing.T) {
	dir := t.TempDir()
	mk := func(index uint64) string {
		d, err := os.MkdirTemp(dir, receivedName(index))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	older, same, restored, newer := mk(5), mk(7), mk(7), mk(9)
	other := filepath.Join(dir, "out-1")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	removeReceived(restored, 7)
	for path, want := range map[string]bool{older: false, same: false, restored: true, newer: true, other: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: kept %v, want %v", filepath.Base(path), err == nil, want)
		}
	}
}

// Raft makes its way through a lossy network: with a fifth of the messages
// lost, every command is still applied once by every member.
func TestProgressOverALossyNetwork(t *testing.T) {
	g, nw := newMemGroup(t, 3, Config{})
	g.leader()
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(1, 2))
	lost := 0
	nw.SetDrop(func(*pb.Message) bool {
		mu.Lock()
		defer mu.Unlock()
		drop := rnd.IntN(5) == 0
		if drop {
			lost++
		}
		return drop
	})
	g.propose(commands("a", 100)...)
	cmds := g.converge()
	if want := commands("a", 100); !slices.Equal(cmds[:100], want) {
		t.Fatalf("applied %q, want %q first", cmds, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if lost == 0 {
		t.Fatal("the network lost nothing")
	}
}
