package scproto

import (
	"encoding/binary"
	"net"
	"os"
	"syscall"
	"testing"

	pb "github.com/stratafs/strata/proto/strata/v1"
	"google.golang.org/protobuf/proto"
)

// socketPair returns the two ends of a connected Unix socket.
func socketPair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { c.Close() })
	}
	return conns[0], conns[1]
}

// Messages of different sizes, with and without a descriptor, arrive whole
// through the pooled receive buffers.
func TestWriteReadFD(t *testing.T) {
	a, b := socketPair(t)
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	big := &pb.ShortCircuitResponse{Ok: true, PageSize: 1 << 16, Path: "/cache/x.data"}
	for i := range 1024 {
		big.Crcs = append(big.Crcs, uint32(i)*2654435761)
	}
	for _, m := range []*pb.ShortCircuitResponse{big, {Error: "no"}, big} {
		var rights []byte
		if m.Ok {
			rights = syscall.UnixRights(int(f.Fd()))
		}
		if err := Write(a, m, rights); err != nil {
			t.Fatal(err)
		}
		got := &pb.ShortCircuitResponse{}
		fd, err := ReadFD(b, got)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, m) {
			t.Fatalf("got %v, want %v", got, m)
		}
		if (fd >= 0) != m.Ok {
			t.Fatalf("descriptor %d with a message that has Ok=%v", fd, m.Ok)
		}
		closeFD(fd)
	}
}

// decode never panics on bytes from a peer, and what it accepts encodes
// back to a message that decodes the same.
func FuzzDecode(f *testing.F) {
	for _, m := range []proto.Message{
		&pb.ShortCircuitRequest{Block: &pb.BlockRef{StoreUri: "file:///b", InodeId: 1, BlockId: 2, Length: 3}, Length: 3},
		&pb.ShortCircuitResponse{Ok: true, PageSize: 1 << 20, Crcs: []uint32{1, 2, 3}, BlockLength: 3 << 20},
	} {
		body, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(binary.AppendUvarint(nil, uint64(len(body))), body...))
	}
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, msg []byte) {
		m := &pb.ShortCircuitResponse{}
		if decode(msg, m) != nil {
			return
		}
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again := &pb.ShortCircuitResponse{}
		if err := decode(append(binary.AppendUvarint(nil, uint64(len(body))), body...), again); err != nil || !proto.Equal(m, again) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
