package raftnode

import (
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func entries(term uint64, from, to uint64) []*pb.Entry {
	var out []*pb.Entry
	for i := from; i <= to; i++ {
		out = append(out, &pb.Entry{Term: proto.Uint64(term), Index: proto.Uint64(i), Data: []byte{byte(i)}})
	}
	return out
}

// The log survives a reopen, a conflicting suffix is replaced, and
// compaction drops what it covers.
func TestLogStore(t *testing.T) {
	dir := t.TempDir()
	ls, existed, err := openLogStore(dir)
	if err != nil || existed {
		t.Fatalf("open: %v existed=%v", err, existed)
	}
	if err := ls.bootstrap([]uint64{1}); err != nil {
		t.Fatal(err)
	}
	hs := &pb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(5)}
	if err := ls.save(hs, entries(1, 2, 10), true); err != nil {
		t.Fatal(err)
	}
	// A new leader's entries replace 8..10.
	if err := ls.save(&pb.HardState{}, entries(2, 8, 9), true); err != nil {
		t.Fatal(err)
	}
	if err := ls.compact(4, &pb.ConfState{Voters: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	ls.close()
	ls, existed, err = openLogStore(dir)
	if err != nil || !existed {
		t.Fatalf("reopen: %v existed=%v", err, existed)
	}
	defer ls.close()
	first, _ := ls.mem.FirstIndex()
	last, _ := ls.mem.LastIndex()
	if first != 5 || last != 9 || ls.last != 9 {
		t.Fatalf("log spans %d..%d (last %d), want 5..9", first, last, ls.last)
	}
	if term, _ := ls.mem.Term(9); term != 2 {
		t.Fatalf("entry 9 has term %d, want 2 (the replacement)", term)
	}
	if st, _, _ := ls.mem.InitialState(); st.GetCommit() != 5 {
		t.Fatalf("hard state %v", st)
	}
	n := 0
	it, _ := ls.db.NewIter(nil)
	for ok := it.First(); ok; ok = it.Next() {
		if it.Key()[0] == 'e' {
			n++
		}
	}
	it.Close()
	if n != 5 {
		t.Fatalf("%d entries on disk, want 5", n)
	}
}
