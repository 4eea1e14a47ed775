package statemachine_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// TestReplayIsDeterministic applies one log of random commands (alone and
// in groups, with retries and membership changes) three ways: from
// scratch an entry at a time, from scratch in runs of random length (as
// the service's group commit applies them), and, on pebble, half from
// scratch, then the rest on a store opened from a checkpoint of the first
// half. All three stores must hold the same bytes.
func TestReplayIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			entries := randomLog(rand.New(rand.NewPCG(seed, 7)), 400)
			m := newMachine()
			one := kv.NewMem()
			for _, e := range entries {
				applyMem(t, m, one, []*raftpb.Entry{e})
			}
			runs := kv.NewMem()
			rng := rand.New(rand.NewPCG(seed, 8))
			for rest := entries; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(20))
				applyMem(t, m, runs, rest[:n])
				rest = rest[n:]
			}
			if d := diffStores(dump(t, one), dump(t, runs)); d != "" {
				t.Fatalf("an entry at a time and in runs: %s", d)
			}
			if d := diffStores(dump(t, one), replayFromCheckpoint(t, m, entries)); d != "" {
				t.Fatalf("from scratch and from a checkpoint: %s", d)
			}
		})
	}
}

func newMachine() *statemachine.Machine {
	return statemachine.New(namespace.Config{Superuser: "super", Supergroup: "supergroup", InlineLimit: 16, BlockSize: 1 << 20})
}

func applyMem(t *testing.T, m *statemachine.Machine, store *kv.Mem, entries []*raftpb.Entry) {
	t.Helper()
	tx := kv.NewOverlay(store)
	if _, err := m.ApplyEntries(tx, entries); err != nil {
		t.Fatal(err)
	}
	tx.ApplyTo(store)
}

// replayFromCheckpoint applies the first half of entries to a pebble store,
// checkpoints it, applies the rest to a store opened from the checkpoint,
// and returns that store's contents.
func replayFromCheckpoint(t *testing.T, m *statemachine.Machine, entries []*raftpb.Entry) map[string][]byte {
	dir := t.TempDir()
	first, err := pebblekv.Open(filepath.Join(dir, "first"), pebblekv.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	half := len(entries) / 2
	applyPebble(t, m, first, entries[:half])
	if err := first.Checkpoint(filepath.Join(dir, "checkpoint")); err != nil {
		t.Fatal(err)
	}
	second, err := pebblekv.Open(filepath.Join(dir, "checkpoint"), pebblekv.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	applied, err := statemachine.AppliedIndex(second.Writer())
	if err != nil || applied != entries[half-1].GetIndex() {
		t.Fatalf("the checkpoint's applied index: %d, %v; want %d", applied, err, entries[half-1].GetIndex())
	}
	applyPebble(t, m, second, entries[half:])
	var out map[string][]byte
	if err := second.View(func(r kv.Reader) error { out = dump(t, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func applyPebble(t *testing.T, m *statemachine.Machine, s *pebblekv.Store, entries []*raftpb.Entry) {
	t.Helper()
	for _, e := range entries {
		tx := kv.NewOverlay(s.Writer())
		if _, err := m.ApplyEntries(tx, []*raftpb.Entry{e}); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(tx, false); err != nil {
			t.Fatal(err)
		}
	}
}

func dump(t *testing.T, r kv.Reader) map[string][]byte {
	out := map[string][]byte{}
	if err := r.Scan([]byte{0}, bytes.Repeat([]byte{0xff}, 16), func(k, v []byte) bool {
		out[string(k)] = bytes.Clone(v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStores(a, b map[string][]byte) string {
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return fmt.Sprintf("key %q: %x against %x (present: %v)", k, v, w, ok)
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d keys against %d", len(a), len(b))
	}
	return ""
}

// randomLog makes n log entries: the namespace's first, then random
// commands over a small alphabet of paths so that they collide, a fifth of
// them in groups, some retried, and now and then a membership change.
func randomLog(rng *rand.Rand, n int) []*raftpb.Entry {
	g := &logGen{rng: rng}
	g.add(statemachine.CreateNamespace.Command(&pb.CreateNamespaceRequest{Header: &pb.Header{User: "super"},
		Namespace: &pb.NamespaceInfo{Name: "default", Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file:///b"}}))
	for len(g.entries) < n {
		switch r := rng.IntN(20); {
		case r == 0:
			g.confChange()
		case r < 5:
			grp := &pb.CommandGroup{}
			for range 1 + rng.IntN(8) {
				grp.Commands = append(grp.Commands, g.command())
			}
			g.add(&pb.Command{Op: &pb.Command_Group{Group: grp}})
		default:
			g.add(g.command())
		}
	}
	return g.entries
}

type logGen struct {
	rng     *rand.Rand
	entries []*raftpb.Entry
	rid     int
	last    *pb.Command // the last client command, retried now and then
}

func (g *logGen) add(cmd *pb.Command) {
	i := uint64(len(g.entries) + 1)
	cmd.Id, cmd.Now = i, int64(1000*i)
	cmd.Settings = newMachine().Settings()
	data, err := proto.Marshal(cmd)
	if err != nil {
		panic(err)
	}
	g.entries = append(g.entries, &raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(1 + i/100),
		Type: raftpb.EntryType_EntryNormal.Enum(), Data: data})
}

func (g *logGen) confChange() {
	i := uint64(len(g.entries) + 1)
	typ := raftpb.ConfChangeType_ConfChangeAddNode
	if g.rng.IntN(2) == 0 {
		typ = raftpb.ConfChangeType_ConfChangeRemoveNode
	}
	cc := &raftpb.ConfChange{Type: typ.Enum(), NodeId: proto.Uint64(1 + g.rng.Uint64N(5)), Id: proto.Uint64(i),
		Context: []byte(fmt.Sprintf("127.0.0.1:%d", 7700+g.rng.IntN(5)))}
	data, err := proto.Marshal(cc)
	if err != nil {
		panic(err)
	}
	g.entries = append(g.entries, &raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(1 + i/100),
		Type: raftpb.EntryType_EntryConfChange.Enum(), Data: data})
}

func (g *logGen) path() string {
	p := ""
	for range 1 + g.rng.IntN(3) {
		p += "/" + []string{"a", "b", "c"}[g.rng.IntN(3)]
	}
	return p
}

// command returns a random client command (or the last one again, as its
// retry), or a command of the service's own.
func (g *logGen) command() *pb.Command {
	if g.last != nil && g.rng.IntN(10) == 0 {
		c := proto.Clone(g.last).(*pb.Command)
		return c
	}
	g.rid++
	h := &pb.Header{User: []string{"super", "alice"}[g.rng.IntN(2)], ClientName: "c1",
		RequestId: []byte(fmt.Sprintf("r%d", g.rid)), FirstAttempt: g.rng.IntN(2) == 0}
	var c *pb.Command
	switch g.rng.IntN(7) {
	case 0:
		c = statemachine.Mkdirs.Command(&pb.MkdirsRequest{Header: h, Path: g.path(), Permission: 0o777, CreateParents: true})
	case 1:
		c = statemachine.Create.Command(&pb.CreateRequest{Header: h, Path: g.path(), Permission: 0o644,
			CreateParents: true, Overwrite: g.rng.IntN(2) == 0, Complete: g.rng.IntN(2) == 0, InlineData: []byte("x")[:g.rng.IntN(2)]})
	case 2:
		c = statemachine.Rename.Command(&pb.RenameRequest{Header: h, Src: g.path(), Dst: g.path()})
	case 3:
		c = statemachine.Delete.Command(&pb.DeleteRequest{Header: h, Path: g.path(), Recursive: g.rng.IntN(2) == 0})
	case 4:
		c = statemachine.SetPermission.Command(&pb.SetPermissionRequest{Header: h, Path: g.path(), Permission: 0o700 + uint32(g.rng.IntN(0o77))})
	case 5:
		return statemachine.Purge.Command(&pb.PurgeCommand{Limit: uint32(1 + g.rng.IntN(5))})
	default:
		c = statemachine.RecoverLease.Command(&pb.RecoverLeaseRequest{Header: h, Path: g.path()})
	}
	g.last = c
	return c
}
