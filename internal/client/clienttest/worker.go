package clienttest

import (
	"fmt"
	"time"

	"google.golang.org/grpc"

	pb "github.com/stratafs/strata/proto/strata/v1"
)

// worker is a fake cache worker: it serves WorkerService's Read (a block's
// bytes, zeros) over gRPC on a loopback port of its own, and logs each read
// as "Read INODE/BLOCK" in its group's log. The members list the workers of
// their group, in the order they started, as the service's live workers.
type worker struct {
	pb.UnimplementedWorkerServiceServer
	name  string
	group *Group
	lis   *switchListener
	srv   *grpc.Server
}

// startWorker serves a new worker on a free loopback port.
func startWorker(g *Group, name string) (*worker, error) {
	lis, err := newSwitchListener()
	if err != nil {
		return nil, err
	}
	w := &worker{name: name, group: g, lis: lis, srv: grpc.NewServer()}
	pb.RegisterWorkerServiceServer(w.srv, w)
	go func() { _ = w.srv.Serve(lis) }()
	return w, nil
}

// Read implements WorkerService: the range asked for, zeros, in one message.
func (w *worker) Read(req *pb.ReadRequest, stream grpc.ServerStreamingServer[pb.ReadResponse]) error {
	w.group.received(w.name, "Read", req)
	return stream.Send(&pb.ReadResponse{Data: make([]byte, req.Length)})
}

// info is the worker as the service lists it: on another host than the
// client's, so that it is read through its RPC.
func (w *worker) info() *pb.WorkerInfo {
	return &pb.WorkerInfo{Id: w.name, Address: w.lis.addr, Host: "another-host"}
}

func (w *worker) stop() {
	w.srv.Stop()
	w.lis.Close()
}

// do carries out a worker's line: "refuses", "down", "up" (as a member's).
func (w *worker) do(verb string) error {
	switch verb {
	case "refuses":
		return w.lis.refuse()
	case "down":
		w.lis.goDown()
	case "up":
		return w.lis.up()
	default:
		return fmt.Errorf("unknown verb %q for a worker", verb)
	}
	return nil
}

// file is what a member answers an Open of a path with: a file of blocks
// of fileBlock bytes, numbered from 0, of the inode given.
type file struct {
	inode  uint64
	blocks int
}

// fileBlock is the size of a scripted file's blocks.
const fileBlock = 1024

// open is the answer to an Open of the file, named name. NB: with a block
// token an hour from its expiry, as the service always grants one: the
// clients differ on a missing one (Java's asks again at every block, Go's
// never).
func (f file) open(name string) *pb.OpenResponse {
	r := &pb.OpenResponse{StoreUri: "mem://fake", BlockToken: []byte("fake-block-token"),
		BlockTokenExpires: time.Now().Add(time.Hour).UnixMilli(), Status: &pb.FileStatus{Name: name, InodeId: f.inode,
			Type: pb.FileType_FILE_TYPE_FILE, Length: uint64(f.blocks * fileBlock), BlockSize: fileBlock}}
	for i := range f.blocks {
		r.Blocks = append(r.Blocks, &pb.Block{BlockId: uint64(i), Offset: uint64(i * fileBlock), Length: fileBlock})
	}
	return r
}
