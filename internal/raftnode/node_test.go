package raftnode

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	pb "go.etcd.io/raft/v3/raftpb"
)

// recorder is a state machine that records the commands it applies and
// fails on the command "fail". Its fields have no lock: only the applier
// touches them while the node runs, and a test reads them once the node
// stopped, which the race detector checks is after the applier's last
// Apply.
type recorder struct {
	applied []string
	seen    chan struct{} // a command was applied
	// The command "slow" (and "fail", with a gate) waits for gate to
	// close; entered tells it began.
	gate, entered chan struct{}
}

var errApply = errors.New("the state machine cannot apply this")

func (r *recorder) Apply(entries []*pb.Entry) error {
	for _, e := range entries {
		if e.GetType() != pb.EntryType_EntryNormal || len(e.GetData()) == 0 {
			continue
		}
		if bytes.Equal(e.GetData(), []byte("slow")) || bytes.Equal(e.GetData(), []byte("fail")) && r.gate != nil {
			close(r.entered)
			<-r.gate
		}
		if bytes.Equal(e.GetData(), []byte("fail")) {
			return errApply
		}
		r.applied = append(r.applied, string(e.GetData()))
		select {
		case r.seen <- struct{}{}:
		default:
		}
	}
	return nil
}

func (r *recorder) Sync() error             { return nil }
func (r *recorder) Durable(uint64) error    { return nil }
func (r *recorder) Checkpoint(string) error { return errors.New("no checkpoints") }
func (r *recorder) Restore(string) error    { return errors.New("no checkpoints") }

// startLone starts a single-member group on sm and waits until it leads.
func startLone(t *testing.T, sm StateMachine) *Node {
	t.Helper()
	leads := make(chan struct{})
	var once sync.Once
	n, err := Start(Config{ID: 1, ClusterID: "test", Peers: []uint64{1}, Dir: t.TempDir(), Tick: 10 * time.Millisecond,
		OnLeader: func(_, _ uint64, isLeader bool) {
			if isLeader {
				once.Do(func() { close(leads) })
			}
		}}, sm)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-leads:
	case <-time.After(10 * time.Second):
		n.Stop()
		t.Fatal("the lone member did not lead")
	}
	return n
}

// The applier applies in log order; a command the state machine cannot
// apply stops the node with that error, and nothing after it is applied,
// not even what was queued for the applier meanwhile.
func TestApplyErrorStopsTheNode(t *testing.T) {
	sm := &recorder{seen: make(chan struct{}, 1), gate: make(chan struct{}), entered: make(chan struct{})}
	n := startLone(t, sm)
	defer n.Stop()
	ctx := context.Background()
	for _, c := range []string{"a", "b", "fail"} {
		if err := n.Propose(ctx, []byte(c)); err != nil {
			t.Fatalf("propose %s: %v", c, err)
		}
	}
	<-sm.entered // "fail" is being applied
	failed := n.Status().GetCommit()
	if err := n.Propose(ctx, []byte("c")); err != nil {
		t.Fatal(err)
	}
	// Raft counts an entry applied once the loop handed it over.
	deadline := time.Now().Add(10 * time.Second)
	for n.Status().Applied <= failed {
		if time.Now().After(deadline) {
			t.Fatal("c was not queued for the applier")
		}
		runtime.Gosched()
	}
	close(sm.gate)
	<-n.Done()
	if !errors.Is(n.Err(), errApply) {
		t.Fatalf("the node stopped with %v, want the apply's error", n.Err())
	}
	if got := sm.applied; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("applied %q, want a and b only", got)
	}
	if err := n.Propose(ctx, []byte("d")); !errors.Is(err, ErrStopped) {
		t.Fatalf("a proposal to the stopped node: %v, want ErrStopped", err)
	}
}

// Stop returns only once the applier has stopped, so that the state
// machine can be closed after it: reading what the recorder applied is
// then no race (the race detector fails the test if it is). The applier
// is in the middle of an Apply when Stop is called.
func TestStopWaitsForTheApplier(t *testing.T) {
	sm := &recorder{seen: make(chan struct{}, 1), gate: make(chan struct{}), entered: make(chan struct{})}
	n := startLone(t, sm)
	ctx := context.Background()
	if err := n.Propose(ctx, []byte("slow")); err != nil {
		t.Fatal(err)
	}
	<-sm.entered
	for i := range 100 {
		if err := n.Propose(ctx, []byte{'x', byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	stopped := make(chan struct{})
	go func() {
		n.Stop()
		close(stopped)
	}()
	close(sm.gate)
	<-stopped
	if len(sm.applied) == 0 || sm.applied[0] != "slow" {
		t.Fatalf("applied %q, want slow first", sm.applied)
	}
	if err := n.Propose(ctx, []byte("after")); !errors.Is(err, ErrStopped) {
		t.Fatalf("a proposal after Stop: %v", err)
	}
}

// LogWrite tells the loop's write of new entries while it is under way,
// and its channel closes once the write ends: a proposer gathering the
// commands that come meanwhile (metaserver) is let go. Idle, no write.
func TestLogWriteEnds(t *testing.T) {
	n := startLone(t, &recorder{seen: make(chan struct{}, 1)})
	defer n.Stop()
	stop, proposing := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(proposing)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := n.Propose(context.Background(), []byte("x")); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var w <-chan struct{}
	for deadline := time.Now().Add(30 * time.Second); w == nil; w = n.LogWrite() {
		if time.Now().After(deadline) { // a bound for a broken test
			t.Fatal("no log write seen while entries were proposed")
		}
		runtime.Gosched()
	}
	close(stop)
	<-proposing
	select {
	case <-w:
	case <-time.After(10 * time.Second):
		t.Fatal("the log write's channel did not close")
	}
	for deadline := time.Now().Add(10 * time.Second); n.LogWrite() != nil; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("a log write under way on a member that writes nothing")
		}
	}
}
