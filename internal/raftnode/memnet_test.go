package raftnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// proposers propose commands to each member of a group for as long as it
// leads, and record how each proposal went.
type proposers struct {
	cut  atomic.Bool // the test cut the network: proposals from now on are after the cut
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once // closes stop

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
	p := &proposers{stop: make(chan struct{})}
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
		case <-p.stop:
			return
		case <-tick.C:
		}
		if _, leads := n.Leader(); !leads {
			continue
		}
		r := proposal{cmd: fmt.Sprintf("p%d-%d", id, seq), member: id, afterCut: p.cut.Load()}
		r.err = n.Propose(context.Background(), []byte(r.cmd))
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
	p.once.Do(func() { close(p.stop) })
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
	lead := g.leader(lagging)
	round := 0
	waitFor(t, "the leader compacts its log past the lagging member's end", func() bool {
		round++
		g.propose(commands(fmt.Sprintf("b%d-", round), 10)...)
		first, err := g.members[lead].node.log.mem.FirstIndex()
		return err == nil && first > end+1
	})
	heal()
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
