package raftnode

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/privdir"
	spb "github.com/stratafs/strata/proto/strata/v1"
)

// chunks is a received snapshot's stream: the chunks given, then the end.
type chunks struct {
	grpc.ServerStream
	c []*spb.SnapshotChunk
}

func (s *chunks) Recv() (*spb.SnapshotChunk, error) {
	if len(s.c) == 0 {
		return nil, io.EOF
	}
	c := s.c[0]
	s.c = s.c[1:]
	return c, nil
}

func (s *chunks) SendAndClose(*spb.StepResponse) error { return nil }

// TestWhatAMemberWritesIsPrivate: the log, the snapshots' staging
// directory and a snapshot received, each in a directory an older member
// left open (0755), with a umask that leaves files 0644, are open to no
// other user: they hold the cluster's secrets.
func TestWhatAMemberWritesIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	root := t.TempDir()
	logDir, snapDir := filepath.Join(root, "raft"), filepath.Join(root, "snapshots")
	for _, d := range []string{logDir, snapDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ls, _, err := openLogStore(logDir)
	if err != nil {
		t.Fatal(err)
	}
	entries := []*pb.Entry{{Term: proto.Uint64(1), Index: proto.Uint64(1), Data: []byte("a secret")}}
	if err := ls.save(&pb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(1)}, entries, true); err != nil {
		t.Fatal(err)
	}
	if err := ls.db.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(TransportConfig{ClusterID: "test", ID: 1, SnapshotDir: snapDir})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	in, err := os.MkdirTemp(snapDir, receivedName(7))
	if err != nil {
		t.Fatal(err)
	}
	stream := &chunks{c: []*spb.SnapshotChunk{{File: "MANIFEST-000001", Data: []byte("m"), Eof: true},
		{File: "sub/000005.sst", Data: []byte("a secret"), Eof: true}}}
	if err := receiveFiles(stream, in); err != nil {
		t.Fatal(err)
	}
	shared, err := privdir.Shared(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range shared {
		t.Errorf("open to others: %s", p)
	}
}
