package raftnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// memState is the tests' state machine: the commands applied, in order. It
// writes them to a file in its directory after each Apply, atomically with
// the index as the contract asks (no fsync: the tests lose a process's
// memory, never the machine's), so that a member restarts from its
// directories as a real one does.
type memState struct {
	dir string

	mu struct {
		sync.Mutex
		memImage
		restores int
		crashAt  string // the command whose Apply crashes
	}
}

// memImage is what memState keeps on disk and in its checkpoints.
type memImage struct {
	Applied  uint64
	Commands []string
}

const memStateFile = "state.json"

// errCrash is the failure of an Apply that crashed half-way.
var errCrash = errors.New("memState: crashed in the middle of an apply")

// openMemState opens the state kept in dir, empty if there is none.
func openMemState(dir string) (*memState, error) {
	s := &memState{dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	img, err := readMemImage(dir)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	s.mu.memImage = img
	return s, err
}

func readMemImage(dir string) (memImage, error) {
	var img memImage
	data, err := os.ReadFile(filepath.Join(dir, memStateFile))
	if err != nil {
		return img, err
	}
	return img, json.Unmarshal(data, &img)
}

func writeMemImage(dir string, img memImage) error {
	data, err := json.Marshal(img)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, memStateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, memStateFile))
}

// Apply implements StateMachine. The command crashAt crashes it: the
// entries of the batch before it are applied in memory only, and lost
// with the process.
func (s *memState) Apply(entries []*pb.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		if e.GetIndex() <= s.mu.Applied {
			continue
		}
		if cmd := string(e.GetData()); e.GetType() == pb.EntryType_EntryNormal && cmd != "" {
			if cmd == s.mu.crashAt {
				return errCrash
			}
			s.mu.Commands = append(s.mu.Commands, cmd)
		}
		s.mu.Applied = e.GetIndex()
	}
	return writeMemImage(s.dir, s.mu.memImage)
}

// Sync implements StateMachine: Apply wrote everything already.
func (s *memState) Sync() error { return nil }

func (s *memState) Durable(uint64) error { return nil }

// Checkpoint implements StateMachine.
func (s *memState) Checkpoint(dir string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return writeMemImage(dir, s.mu.memImage)
}

// Restore implements StateMachine.
func (s *memState) Restore(dir string) error {
	img, err := readMemImage(dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.memImage = img
	s.mu.restores++
	return writeMemImage(s.dir, img)
}

func (s *memState) crashOn(cmd string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.crashAt = cmd
}

func (s *memState) applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.Applied
}

// commands returns a copy of the commands applied, and how many snapshots
// were restored.
func (s *memState) commands() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mu.Commands), s.mu.restores
}

// testNetwork connects the members of a testGroup.
type testNetwork interface {
	// join connects member id, whose state is sm, and returns its Sender,
	// what attaches its node to it, and what closes it.
	join(id uint64, sm *memState) (s Sender, attach func(*Node), close func(), err error)
}

// memTestNetwork is a MemNetwork as a testNetwork.
type memTestNetwork struct{ *MemNetwork }

func (nw memTestNetwork) join(id uint64, sm *memState) (Sender, func(*Node), func(), error) {
	s, err := nw.Join(id, sm.Checkpoint)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, s.Attach, s.Close, nil
}

// testGroup is a group of members over a testNetwork, each with a memState,
// that the test can stop and start again from their directories. Only the
// test's goroutine starts and stops members.
type testGroup struct {
	t       *testing.T
	nw      testNetwork
	dir     string
	cfg     Config // what the members' configurations have in common
	members map[uint64]*testMember
	// away are the members the test cut off: they are not asked to lead.
	// NB: a proposal to a member that stops leading and knows of no leader
	// waits until it learns of one, which a member cut off never does.
	away map[uint64]bool
	seq  int // numbers barriers
}

type testMember struct {
	sm    *memState
	node  *Node
	close func() // closes the member's Sender
}

// newTestGroup starts members 1 to size, with cfg's tick and compaction.
func newTestGroup(t *testing.T, nw testNetwork, size int, cfg Config) *testGroup {
	t.Helper()
	cfg.ClusterID = "test"
	cfg.Tick = 10 * time.Millisecond
	for id := range size {
		cfg.Peers = append(cfg.Peers, uint64(id+1))
	}
	g := &testGroup{t: t, nw: nw, dir: t.TempDir(), cfg: cfg, members: map[uint64]*testMember{},
		away: map[uint64]bool{}}
	t.Cleanup(func() {
		for id := range g.members {
			g.stop(id)
		}
	})
	for _, id := range cfg.Peers {
		g.start(id)
	}
	return g
}

// newMemGroup starts a group over a MemNetwork, which it returns too.
func newMemGroup(t *testing.T, size int, cfg Config) (*testGroup, *MemNetwork) {
	nw := NewMemNetwork(t.TempDir())
	return newTestGroup(t, memTestNetwork{nw}, size, cfg), nw
}

// start starts member id from its directories.
func (g *testGroup) start(id uint64) {
	g.t.Helper()
	dir := filepath.Join(g.dir, strconv.FormatUint(id, 10))
	sm, err := openMemState(filepath.Join(dir, "state"))
	if err != nil {
		g.t.Fatal(err)
	}
	sender, attach, closeSender, err := g.nw.join(id, sm)
	if err != nil {
		g.t.Fatal(err)
	}
	cfg := g.cfg
	cfg.ID, cfg.Dir, cfg.Applied, cfg.Transport = id, filepath.Join(dir, "raft"), sm.applied(), sender
	n, err := Start(cfg, sm)
	if err != nil {
		closeSender()
		g.t.Fatalf("start member %d: %v", id, err)
	}
	attach(n)
	g.members[id] = &testMember{sm: sm, node: n, close: closeSender}
}

// stop stops member id, as its process would end.
func (g *testGroup) stop(id uint64) {
	m := g.members[id]
	m.node.Stop()
	m.close()
	delete(g.members, id)
}

// waitFor polls cond until it holds, and fails the test if it does not
// within a deadline generous enough for the race detector on a busy machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		<-tick.C
	}
}

// leader waits until one of the running members leads, one that is
// neither away nor in not, and returns it.
func (g *testGroup) leader(not ...uint64) uint64 {
	g.t.Helper()
	var lead uint64
	waitFor(g.t, "a leader", func() bool {
		for id, m := range g.members {
			if _, leads := m.node.Leader(); leads && !g.away[id] && !slices.Contains(not, id) {
				lead = id
				return true
			}
		}
		return false
	})
	return lead
}

// propose proposes each command to the leader, again to the next one
// when that one stops leading before it took it.
func (g *testGroup) propose(cmds ...string) {
	g.t.Helper()
	for _, cmd := range cmds {
		taken := false
		for !taken {
			taken = g.proposeOnce(cmd)
		}
	}
}

// proposeOnce proposes cmd to the leader; false if it was not leading.
func (g *testGroup) proposeOnce(cmd string) bool {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := g.members[g.leader()].node.Propose(ctx, []byte(cmd))
	if err != nil && !errors.Is(err, ErrNotLeader) {
		g.t.Fatalf("propose %s: %v", cmd, err)
	}
	return err == nil
}

// commands returns n commands named prefix0, prefix1...
func commands(prefix string, n int) []string {
	cmds := make([]string, n)
	for i := range cmds {
		cmds[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return cmds
}

// converge proposes a barrier and waits until every running member applied
// it; the members must then have applied the same commands, each once. It
// returns them.
func (g *testGroup) converge() []string {
	g.t.Helper()
	g.seq++
	barrier := fmt.Sprintf("barrier%d", g.seq)
	g.propose(barrier)
	defer func() { // what the members are at, when they do not converge
		if g.t.Failed() {
			for id, m := range g.members {
				st := m.node.Status()
				cmds, restores := m.sm.commands()
				g.t.Logf("member %d: %s, state at %d (%d commands, %d snapshots restored), log to %d, %v, progress %v",
					id, st.RaftState, m.sm.applied(), len(cmds), restores, m.node.LastIndex(), st.HardState, st.Progress)
			}
		}
	}()
	waitFor(g.t, "every member applies "+barrier, func() bool {
		for _, m := range g.members {
			if cmds, _ := m.sm.commands(); !slices.Contains(cmds, barrier) {
				return false
			}
		}
		return true
	})
	var want []string
	var first uint64
	for id, m := range g.members {
		cmds, _ := m.sm.commands()
		if want == nil {
			want, first = cmds, id
			checkOnce(g.t, id, cmds)
		} else if !slices.Equal(cmds, want) {
			g.t.Fatalf("member %d applied %q,\nmember %d %q", id, cmds, first, want)
		}
	}
	return want
}

// checkOnce fails the test if member id applied a command twice.
func checkOnce(t *testing.T, id uint64, cmds []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c] {
			t.Fatalf("member %d applied %s twice", id, c)
		}
		seen[c] = true
	}
}
