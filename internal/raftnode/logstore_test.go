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
	// The compaction point moves to 5; one entry stays behind it.
	if err := ls.compact(5, 1, &pb.ConfState{Voters: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	if first, _ := ls.mem.FirstIndex(); first != 5 || ls.first != 5 {
		t.Fatalf("after compaction the log starts at %d (on disk %d), want 5", first, ls.first)
	}
	ls.close()
	ls, existed, err = openLogStore(dir)
	if err != nil || !existed {
		t.Fatalf("reopen: %v existed=%v", err, existed)
	}
	defer ls.close()
	// After a restart the log starts after the compaction point; the kept
	// entry is still on disk until the next compaction.
	first, _ := ls.mem.FirstIndex()
	last, _ := ls.mem.LastIndex()
	if first != 6 || last != 9 || ls.last != 9 || ls.first != 5 {
		t.Fatalf("log spans %d..%d (on disk %d..%d), want 6..9 (5..9)", first, last, ls.first, ls.last)
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
