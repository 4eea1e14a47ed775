package raftnode

import (
	"context"
	"fmt"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// events is a state machine that tells what it is asked, in order: "apply
// DATA", "durable", "sync".
type events chan string

func (e events) Apply(entries []*pb.Entry) error {
	for _, en := range entries {
		if en.GetType() == pb.EntryType_EntryNormal && len(en.GetData()) > 0 {
			e <- "apply " + string(en.GetData())
		}
	}
	return nil
}
func (e events) Durable(uint64) error    { e <- "durable"; return nil }
func (e events) Sync() error             { e <- "sync"; return nil }
func (e events) Checkpoint(string) error { return fmt.Errorf("no checkpoints") }
func (e events) Restore(string) error    { return fmt.Errorf("no checkpoints") }
func volatileData(data []byte) bool      { return len(data) > 0 && data[0] == 'v' }
func (e events) want(t *testing.T, what ...string) {
	t.Helper()
	for _, w := range what {
		select {
		case got := <-e:
			if got != w {
				t.Fatalf("the state machine heard %q, want %q", got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the state machine did not hear %q", w)
		}
	}
}

// startVolatile starts a lone member whose entries beginning with 'v' are
// volatile, with ticks tick apart (a lone member campaigns at once: an
// hour, and no timed sync happens during a test).
func startVolatile(t *testing.T, sm StateMachine, tick time.Duration, compactEvery uint64) *Node {
	t.Helper()
	leads := make(chan struct{}, 1)
	n, err := Start(Config{ID: 1, ClusterID: "test", Peers: []uint64{1}, Dir: t.TempDir(), Tick: tick,
		CompactEvery: compactEvery, Volatile: volatileData, OnLeader: func(_, _ uint64, isLeader bool) {
			if isLeader {
				select {
				case leads <- struct{}{}:
				default:
				}
			}
		}}, sm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	<-leads
	// The leader's first entry, empty, and a durable one after it: what
	// the tests then propose is alone in its Readies.
	if err := n.Propose(context.Background(), []byte("d0")); err != nil {
		t.Fatal(err)
	}
	sm.(events).want(t, "apply d0")
	return n
}

// Volatile entries are written without a sync and applied; the state
// machine hears they are durable once a sync covers them: here, that of
// the next entry that is not volatile, before that entry is applied.
func TestVolatileEntriesWaitForTheNextSync(t *testing.T) {
	sm := make(events, 16)
	n := startVolatile(t, sm, time.Hour, 0)
	ctx := context.Background()
	before := n.log.syncs.Load()
	for _, c := range []string{"v1", "v2"} {
		if err := n.Propose(ctx, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	sm.want(t, "apply v1", "apply v2")
	if got := n.log.syncs.Load(); got != before {
		t.Fatalf("%d syncs for volatile entries alone", got-before)
	}
	if err := n.Propose(ctx, []byte("d")); err != nil {
		t.Fatal(err)
	}
	sm.want(t, "durable", "apply d")
	if got := n.log.syncs.Load(); got != before+1 {
		t.Fatalf("%d syncs for one durable entry", got-before)
	}
}

// A tick syncs the log that holds volatile entries written since its last
// sync, and the state machine hears it: volatile entries alone are durable
// within two ticks.
func TestATickSyncsVolatileEntries(t *testing.T) {
	sm := make(events, 16)
	n := startVolatile(t, sm, 20*time.Millisecond, 0)
	if err := n.Propose(context.Background(), []byte("v1")); err != nil {
		t.Fatal(err)
	}
	sm.want(t, "apply v1", "durable")
}

// The log is compacted behind volatile entries only once the state
// machine heard they are durable: it may have held them in memory only.
// (The log's first index is 1, its bootstrap; the leader's empty entry is
// 2, d0 3, v1 4: the compaction every 3 entries comes at the first Ready
// once v1 is applied, v2's.)
func TestCompactionMakesVolatileEntriesDurableFirst(t *testing.T) {
	sm := make(events, 16)
	n := startVolatile(t, sm, time.Hour, 3)
	ctx := context.Background()
	if err := n.Propose(ctx, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	sm.want(t, "apply v1")
	if err := n.Propose(ctx, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	sm.want(t, "durable", "sync", "apply v2")
}
