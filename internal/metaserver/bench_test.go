package metaserver

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/cputime"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/namespace"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// BenchmarkApplyCreates applies log entries of creates the way a member
// does under `strata bench meta --threads 64`: each entry a command group
// of 16 creates with first-attempt request ids made as the clients make
// them (a random prefix and a counter), in 64 directories three levels
// down, one Apply (one pebble commit) per entry. It measures what every
// member spends per create in its serial apply, which bounds the creates
// per second of a group (docs/benchmarks.md); unlike the end-to-end
// benchmark, it is steady from run to run. cpu-ns/op is the process's CPU
// per create, pebble's flushes and compactions included: steadier than
// ns/op on a machine busy with something else. A leader's commits add what
// they write to the hot cache, a follower's do not (Store.SetWriteThrough).
func BenchmarkApplyCreates(b *testing.B) {
	for _, leader := range []bool{true, false} {
		b.Run(map[bool]string{true: "leader", false: "follower"}[leader], func(b *testing.B) {
			benchmarkApplyCreates(b, leader)
		})
	}
}

func benchmarkApplyCreates(b *testing.B, leader bool) {
	s, dirs := benchCreateDirs(b, leader)
	cmds := make([]*pb.Command, b.N)
	for j := range cmds {
		cmds[j] = &pb.Command{Op: &pb.Command_Create{Create: &pb.CreateRequest{
			Header: benchHeader(j), Path: fmt.Sprintf("/bench/t%d/0/f%d", j%dirs, j), Permission: 0o644, Umask: 0o022,
			Overwrite: true, Complete: true}}}
	}
	entries := benchEntries(b, s, cmds)
	b.ResetTimer()
	cpu0 := cputime.Process()
	benchApply(b, s, entries)
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkApplyCreateStreams is BenchmarkApplyCreates for files created
// the way a writer that streams creates them, Hadoop's create then close:
// one op is a create of a file open for writing, then, in a later entry,
// its complete as empty. It measures the two mutations of an empty file
// through the Hadoop API.
func BenchmarkApplyCreateStreams(b *testing.B) {
	s, dirs := benchCreateDirs(b, true)
	next, err := nextInode(s.store.Writer())
	if err != nil {
		b.Fatal(err)
	}
	creates, completes := make([]*pb.Command, b.N), make([]*pb.Command, b.N)
	for j := range creates {
		path := fmt.Sprintf("/bench/t%d/0/f%d", j%dirs, j)
		creates[j] = &pb.Command{Op: &pb.Command_Create{Create: &pb.CreateRequest{
			Header: benchHeader(2 * j), Path: path, Permission: 0o644, Umask: 0o022, Overwrite: true}}}
		// Each create allocates the next inode id, in the log's order.
		completes[j] = &pb.Command{Op: &pb.Command_Complete{Complete: &pb.CompleteRequest{
			Header: benchHeader(2*j + 1), Path: path, InodeId: next + uint64(j)}}}
	}
	createEntries, completeEntries := benchEntries(b, s, creates), benchEntries(b, s, completes)
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := range createEntries {
		benchApply(b, s, createEntries[i:i+1])
		benchApply(b, s, completeEntries[i:i+1])
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
	b.StopTimer()
	var last proto.Message
	err = s.store.View(func(r kv.Reader) (err error) {
		last, err = s.machine.Read(statemachine.GetFileStatus.Op, r, &pb.GetFileStatusRequest{Header: &pb.Header{User: super.User},
			Path: fmt.Sprintf("/bench/t%d/0/f%d", (b.N-1)%dirs, b.N-1)})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if st := last.(*pb.GetFileStatusResponse).GetStatus(); st.GetInodeId() != next+uint64(b.N-1) || st.GetUnderConstruction() {
		b.Fatalf("the last file is %v, not closed inode %d", st, next+uint64(b.N-1))
	}
}

// benchCreateDirs returns a service's state machine with 64 directories
// three levels down, /bench/tT/0, committed, and their number.
func benchCreateDirs(b *testing.B, leader bool) (*replica, int) {
	s, setup := benchServer(b)
	s.store.SetWriteThrough(leader)
	const dirs = 64
	for d := range dirs {
		if _, err := s.machine.FS().Mkdirs(setup, 1, super, "", fmt.Sprintf("/bench/t%d/0", d), 0o755, 0o022, true); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.store.Commit(setup, false); err != nil {
		b.Fatal(err)
	}
	return s, dirs
}

var benchPrefix = func() (p [8]byte) {
	_, _ = rand.Read(p[:])
	return p
}()

// benchHeader is the header of request j, with a first-attempt request id
// made as the clients make them (a random prefix and a counter).
func benchHeader(j int) *pb.Header {
	return &pb.Header{User: "super", ClientName: "bench", RequestId: binary.BigEndian.AppendUint64(benchPrefix[:], uint64(j)),
		FirstAttempt: true}
}

// benchEntries returns log entries of cmds, each a group of 16.
func benchEntries(b *testing.B, s *replica, cmds []*pb.Command) []*raftpb.Entry {
	const group = 16
	entries := make([]*raftpb.Entry, 0, len(cmds)/group+1)
	for i := 0; i < len(cmds); i += group {
		g := &pb.CommandGroup{Commands: cmds[i:min(i+group, len(cmds))]}
		data, err := proto.Marshal(&pb.Command{Op: &pb.Command_Group{Group: g}, Id: uint64(len(entries) + 1),
			Now: int64(1000 + len(entries)), Settings: s.machine.Settings()})
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, &raftpb.Entry{Data: data})
	}
	return entries
}

// benchApply applies entries one Apply (one pebble commit) each, indexed
// after those applied so far.
func benchApply(b *testing.B, s *replica, entries []*raftpb.Entry) {
	for _, e := range entries {
		e.Index, e.Term = proto.Uint64(s.applied.Load()+1), proto.Uint64(1)
		if err := s.Apply([]*raftpb.Entry{e}); err != nil {
			b.Fatal(err)
		}
	}
}

// nextInode returns the inode id the next create will take.
func nextInode(r kv.Reader) (uint64, error) {
	v, ok, err := r.Get(kvschema.NextIDKey)
	if err != nil || !ok {
		return 0, fmt.Errorf("no next inode id (%v)", err)
	}
	vs, err := kvschema.DecodeUint64s(v, 1)
	if err != nil {
		return 0, err
	}
	return vs[0], nil
}

// BenchmarkListPages lists directories of 100 files, a page each, the way
// `ls -R` of a large tree reads them: the namespace's listing and the
// response's encoding, without gRPC. One op is one entry listed.
func BenchmarkListPages(b *testing.B) {
	s, setup := benchServer(b)
	store, fs := s.store, s.machine.FS()
	const dirs, files = 200, 100
	for d := range dirs {
		for f := range files {
			if _, err := fs.Create(setup, 1, super, "", fmt.Sprintf("/tree/%d/%d/f%d", d/100, d%100, f),
				namespace.CreateOptions{Perm: 0o644, Umask: 0o022, Parents: true, Closed: true, Holder: "x"}); err != nil {
				b.Fatal(err)
			}
		}
		if d%10 == 9 {
			if err := store.Commit(setup, false); err != nil {
				b.Fatal(err)
			}
			setup = kv.NewOverlay(store.Writer())
		}
	}
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := 0; i < b.N; i += files {
		d := (i / files) % dirs
		req := &pb.ListRequest{Header: &pb.Header{User: super.User}, Path: fmt.Sprintf("/tree/%d/%d", d/100, d%100), Limit: 1000}
		var resp proto.Message
		err := store.View(func(r kv.Reader) (err error) {
			resp, err = s.machine.Read(statemachine.List.Op, r, req)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

var super = namespace.Caller{User: "super"}

// benchServer returns a service's state machine on a new store, opened as
// the service opens it, with the default namespace made in the overlay
// returned, not committed yet.
func benchServer(b *testing.B) (*replica, *kv.Overlay) {
	opts := pebblekv.DefaultOptions()
	opts.Uncached = kvschema.IsRequestKey
	store, err := pebblekv.Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	cfg := namespace.DefaultConfig("super")
	s := &replica{store: store, machine: statemachine.New(cfg), events: events{applied: func(statemachine.Applied) {}}, obs: noObserver{}}
	s.props.waiting = map[uint64][]*proposal{}
	setup := kv.NewOverlay(store.Writer())
	if err := s.machine.FS().CreateNamespace(setup, 1, super, kvschema.Namespace{Name: namespace.DefaultNamespace, Mode: 1}); err != nil {
		b.Fatal(err)
	}
	return s, setup
}
