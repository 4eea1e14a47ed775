package testhosts_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/lincheck"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/testhosts"
)

// Partition test's shape: three members, two workers and three client
// hosts of two clients each, every one a host of its own; two clients of
// different hosts on each group.
const (
	partGroups         = 3
	clientsPerHost     = 2
	answeredPerFault   = 40               // operations answered while each cut holds
	fullServiceTimeout = 60 * time.Second // the bound on getting back to full service after a heal
)

// TestPartitions runs concurrent clients, each on a host of its own,
// doing directory operations and file writes and reads, while the network
// is cut: the leader from the followers; a follower from the rest; a
// worker from the service; a client from the leader only; the minority
// (the leader, a worker and a client) from the majority. Each cut holds
// until the clients got answeredPerFault answers, then heals, and the test
// measures the time until every client had an operation answered that it
// called after the heal, and every member caught up: full service. The
// history, closed by reads of every directory and file from the test
// process, must be linearizable (no acknowledged write lost, none refused
// yet visible, every file's content with its checksum). The seed, printed
// first, repeats the run's choices with STRATA_PARTITION_SEED.
func TestPartitions(t *testing.T) {
	seed := partitionSeed(t)
	t.Logf("seed %d (STRATA_PARTITION_SEED=%d go test -run TestPartitions ./internal/testhosts repeats its choices)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	n := testhosts.New(t)
	members := []*testhosts.Host{n.Host("meta-1"), n.Host("meta-2"), n.Host("meta-3")}
	workers := []*testhosts.Host{n.Host("worker-1"), n.Host("worker-2")}
	clients := []*testhosts.Host{n.Host("client-1"), n.Host("client-2"), n.Host("client-3")}
	g := startGroup(t, members)
	for _, w := range workers {
		startWorker(t, w, g.Meta(), t.TempDir())
	}
	admin := testcluster.Client(t, g.Meta(), "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var ids []int
	for i := range len(clients) * clientsPerHost {
		ids = append(ids, i)
		mkdirs(ctx, t, admin, scratchDir(i))
	}
	for grp := range partGroups {
		mkdirs(ctx, t, admin, lincheck.Root(grp))
	}

	h := &lincheck.History{}
	token := testcluster.AdminToken(t, g.Meta())
	var loads []*load
	for i, c := range clients {
		loads = append(loads, startLoad(t, c, h, g.Meta(), token, ids[i*clientsPerHost:(i+1)*clientsPerHost], partGroups, seed))
	}
	p := &partitions{t: t, ctx: ctx, n: n, g: g, h: h, ids: ids, rng: rng, members: members, loads: loads}
	if err := waitAnswered(h, answeredPerFault); err != nil {
		p.describe()
		t.Fatal(err)
	}
	p.run("the leader from the followers", false, func(leader *testhosts.Host, others []*testhosts.Host) {
		n.Partition([]*testhosts.Host{leader}, others)
	})
	p.run("a follower from the rest", false, func(leader *testhosts.Host, others []*testhosts.Host) {
		n.Isolate(others[rng.IntN(len(others))])
	})
	p.run("a worker from the service", false, func(*testhosts.Host, []*testhosts.Host) {
		n.Partition([]*testhosts.Host{workers[rng.IntN(len(workers))]}, members)
	})
	p.run("a client from the leader only", true, func(leader *testhosts.Host, _ []*testhosts.Host) {
		n.Cut(clients[rng.IntN(len(clients))], leader)
	})
	p.run("the minority (the leader, a worker, a client) from the majority", true, func(leader *testhosts.Host, others []*testhosts.Host) {
		minority := []*testhosts.Host{leader, workers[rng.IntN(len(workers))], clients[rng.IntN(len(clients))]}
		var majority []*testhosts.Host
		for _, x := range n.Hosts() {
			if !slices.Contains(minority, x) {
				majority = append(majority, x)
			}
		}
		n.Partition(minority, majority)
	})

	for _, l := range loads {
		l.stop(t)
	}
	closingReads(ctx, t, h, admin, len(ids))
	called, answered, unknown := h.Counts()
	t.Logf("%d operations checked: %d answered, %d without an answer; %d partitions survived; "+
		"full service after each heal: %v", called, answered, unknown, len(p.recovered), p.recovered)
	dir := os.Getenv("STRATA_HISTORY_DIR") // where an illegal history goes; else a temporary directory
	if dir == "" {
		dir = t.TempDir()
	}
	if res, err := h.Check(2*time.Minute, dir); res != porcupine.Ok {
		t.Fatalf("seed %d: the history is not linearizable (%v; in %s: history.html, history.jsonl %v)", seed, res, dir, err)
	}
	if t.Failed() {
		t.Logf("seed %d", seed)
	}
}

// partitions cuts and heals the network under the load.
type partitions struct {
	t         *testing.T
	ctx       context.Context
	n         *testhosts.Net
	g         *testcluster.Group
	h         *lincheck.History
	ids       []int
	rng       *rand.Rand
	members   []*testhosts.Host
	loads     []*load
	recovered []time.Duration
}

// run makes a cut (given the leader and the other members), holds it
// until answeredPerFault operations were answered meanwhile (and, if
// cutOff, a client cut off from the service gave one up), heals everything
// and waits for full service.
func (p *partitions) run(name string, cutOff bool, cut func(leader *testhosts.Host, others []*testhosts.Host)) {
	t := p.t
	t.Helper()
	l, err := p.g.Leader(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := p.members[l-1]
	var others []*testhosts.Host
	for _, m := range p.members {
		if m != leader {
			others = append(others, m)
		}
	}
	unknown := p.h.GivenUp()
	cut(leader, others)
	t.Logf("cut %s (leader %s; links cut: %d)", name, leader.Name, p.n.Cuts())
	err = waitAnswered(p.h, answeredPerFault)
	for err == nil && cutOff {
		if p.h.GivenUp() > unknown {
			break
		}
		err = waitAnswered(p.h, 1)
	}
	if err != nil {
		p.describe()
		t.Fatalf("with %s cut: %v", name, err)
	}
	healed := lincheck.Now()
	p.n.HealAll()
	took := p.fullService(healed)
	p.recovered = append(p.recovered, took.Round(time.Millisecond))
	t.Logf("healed: full service %v after", took.Round(time.Millisecond))
}

// fullService waits until every client had an operation called after
// healed answered and every member caught up with the leader, and returns
// how long after healed that was.
func (p *partitions) fullService(healed int64) time.Duration {
	t := p.t
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, fullServiceTimeout)
	defer cancel()
	for _, id := range p.ids {
		for !p.h.AnsweredSince(id, healed) {
			if ctx.Err() != nil {
				t.Fatalf("client %d: no answer within %v of the heal", id, fullServiceTimeout)
			}
			time.Sleep(5 * time.Millisecond) // polling the load's progress, not synchronising
		}
	}
	if err := p.g.CaughtUp(ctx); err != nil {
		t.Fatalf("the members did not catch up within %v of the heal: %v", fullServiceTimeout, err)
	}
	return time.Duration(lincheck.Now() - healed)
}

// waitAnswered polls until n more operations were answered.
func waitAnswered(h *lincheck.History, n int) error {
	_, start, _ := h.Counts()
	deadline := time.Now().Add(2 * time.Minute)
	for _, a, _ := h.Counts(); a < start+n; _, a, _ = h.Counts() {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d operations answered within 2 minutes", a-start, n)
		}
		time.Sleep(5 * time.Millisecond) // polling the load's progress, not synchronising
	}
	return nil
}

// describe logs what each member says of itself and the last lines of
// each load's logs, to tell why the clients got no answers.
func (p *partitions) describe() {
	for _, st := range testcluster.Client(p.t, p.g.Meta(), "").MemberStatuses(p.ctx) {
		if st.Err != nil {
			p.t.Logf("member %s: %v", st.Address, st.Err)
			continue
		}
		p.t.Logf("member %s: %s term %d commit %d applied %d leader %d", st.Address, st.Status.Role,
			st.Status.Term, st.Status.CommittedIndex, st.Status.AppliedIndex, st.Status.LeaderId)
	}
	for _, l := range p.loads {
		l.mu.Lock()
		p.t.Logf("the load on %s said:\n%s", l.host.Name, strings.Join(l.logs, "\n"))
		l.mu.Unlock()
	}
}

// closingReads reads every directory and file of every group from the
// test process, into the history as client id: they see every
// acknowledged operation, or the check fails. Each must be answered.
func closingReads(ctx context.Context, t *testing.T, h *lincheck.History, c *client.Client, id int) {
	t.Helper()
	run := &lincheck.Runner{C: c}
	for grp := range partGroups {
		for s := range lincheck.Slots {
			for _, k := range []lincheck.Kind{lincheck.Stat, lincheck.Read} {
				in := lincheck.Input{Group: grp, Kind: k, A: s}
				op := h.Call(id, in)
				out, err := run.Do(ctx, in)
				h.Return(id, op, out)
				if err != nil || out.Unknown {
					t.Fatalf("closing %v of group %d slot %d: %+v, %v", k, grp, s, out, err)
				}
			}
		}
	}
}

// partitionSeed is $STRATA_PARTITION_SEED, else a new one.
func partitionSeed(t *testing.T) uint64 {
	if s := os.Getenv("STRATA_PARTITION_SEED"); s != "" {
		seed, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatalf("$STRATA_PARTITION_SEED: %v", err)
		}
		return seed
	}
	return rand.Uint64()
}

func mkdirs(ctx context.Context, t *testing.T, c *client.Client, path string) {
	t.Helper()
	if _, err := c.Mkdirs(ctx, path, 0o777); err != nil {
		t.Fatalf("mkdir %s: %v", path, err)
	}
}
