package metaserver

import (
	"testing"

	raftpb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	sm "github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// An entry is volatile when the leader marked it so: it marks the entries
// of hflushes alone, and the members find the mark whatever the entry
// carries after it.
func TestVolatileEntries(t *testing.T) {
	hflush := sm.Flush.Command(&pb.FlushRequest{Header: &pb.Header{User: "u"}, Path: "/wal", TailData: []byte("x")})
	hsync := sm.Flush.Command(&pb.FlushRequest{Header: &pb.Header{User: "u"}, Path: "/wal", Sync: true})
	mkdir := sm.Mkdirs.Command(&pb.MkdirsRequest{Header: &pb.Header{User: "u"}, Path: "/d"})
	for _, c := range []struct {
		name     string
		cmds     []*pb.Command
		volatile bool
	}{
		{"an hflush", []*pb.Command{hflush}, true},
		{"hflushes", []*pb.Command{hflush, hflush}, true},
		{"an hsync", []*pb.Command{hsync}, false},
		{"an hflush and an hsync", []*pb.Command{hflush, hsync}, false},
		{"an hflush and a mkdir", []*pb.Command{mkdir, hflush}, false},
	} {
		q := make([]*proposal, len(c.cmds))
		for i, cmd := range c.cmds {
			q[i] = newProposal(proto.CloneOf(cmd))
		}
		if got := volatileCommands(q); got != c.volatile {
			t.Errorf("%s: volatile %v", c.name, got)
		}
		entry := q[0].cmd
		if len(q) > 1 {
			g := &pb.CommandGroup{}
			for _, p := range q {
				g.Commands = append(g.Commands, p.cmd)
			}
			entry = &pb.Command{Op: &pb.Command_Group{Group: g}}
		}
		entry.Id, entry.Now, entry.Settings, entry.Volatile = 7, 1000, &pb.NamespaceSettings{Superuser: "root"}, c.volatile
		data, err := proto.Marshal(entry)
		if err != nil {
			t.Fatal(err)
		}
		e := &raftpb.Entry{Data: data}
		if volatileEntry(data) != c.volatile || durableEntry(e) == c.volatile {
			t.Errorf("%s: its entry reads volatile %v", c.name, volatileEntry(data))
		}
	}
	if durableEntry(&raftpb.Entry{}) != true || volatileEntry([]byte{0xff}) {
		t.Error("an empty entry, or bytes no command makes, is volatile")
	}
	conf := &raftpb.Entry{Type: raftpb.EntryType_EntryConfChange.Enum()}
	if !durableEntry(conf) {
		t.Error("a membership change is volatile")
	}
}
