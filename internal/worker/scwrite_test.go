package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// scConn is a connection to a trusting worker's short-circuit socket.
type scConn struct {
	t    *testing.T
	conn *net.UnixConn
}

func dialShortCircuit(t *testing.T, tw *trusting) *scConn {
	sock := filepath.Join(t.TempDir(), "sc.sock")
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go tw.w.serveShortCircuit(ctx, lis)
	t.Cleanup(func() { lis.Close() })
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &scConn{t: t, conn: conn}
}

// ask sends req and returns the answer and the descriptor lent with it
// (nil if none).
func (c *scConn) ask(req *pb.ShortCircuitRequest) (*pb.ShortCircuitResponse, *os.File) {
	c.t.Helper()
	if err := scproto.Write(c.conn, req, nil); err != nil {
		c.t.Fatal(err)
	}
	resp := &pb.ShortCircuitResponse{}
	fd, err := scproto.ReadFD(c.conn, resp)
	if err != nil {
		c.t.Fatal(err)
	}
	if fd < 0 {
		return resp, nil
	}
	f := os.NewFile(uintptr(fd), resp.Path)
	c.t.Cleanup(func() { f.Close() })
	return resp, f
}

const scBlockSize = 1 << 20

func writeHeader(tok []byte) *pb.ShortCircuitRequest {
	return &pb.ShortCircuitRequest{Write: &pb.WriteHeader{Namespace: "default", InodeId: 7, BlockSize: scBlockSize,
		Path: "/f", BlockToken: tok}}
}

func commit(n int) *pb.ShortCircuitRequest {
	return &pb.ShortCircuitRequest{Commit: &pb.ShortCircuitCommit{Length: uint64(n)}}
}

func gone(path string) bool {
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// A short-circuit write lends a new cache file only against a valid write
// token of the file; the block committed is in the bucket and in the
// cache, byte for byte, and reads back through the worker.
func TestShortCircuitWrite(t *testing.T) {
	tw := newTrusting(t)
	c := dialShortCircuit(t, tw)
	for name, tok := range map[string][]byte{
		"no token":      nil,
		"a read token":  testToken(blocktoken.Read, "default", 7, ""),
		"another file":  testToken(blocktoken.Write, "default", 8, ""),
		"another space": testToken(blocktoken.Write, "other", 7, ""),
	} {
		resp, f := c.ask(writeHeader(tok))
		if resp.Ok || f != nil || !strings.Contains(resp.Error, "refused") {
			t.Errorf("a write with %s: ok %v, descriptor %v, error %q", name, resp.Ok, f != nil, resp.Error)
		}
	}
	tok := testToken(blocktoken.Write, "default", 7, "")
	resp, f := c.ask(writeHeader(tok))
	if !resp.Ok || f == nil || resp.BlockSize != scBlockSize {
		t.Fatalf("a write with a valid token: %+v", resp)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 40000) // 625 KiB: a short last page and chunk
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	resp, _ = c.ask(commit(len(data)))
	if !resp.Ok || resp.Block.GetLength() != uint64(len(data)) || resp.Block.GetOffset() != 0 {
		t.Fatalf("commit: %+v", resp)
	}
	id := resp.Block.BlockId
	bucket, _ := tw.w.stores.Get(context.Background(), "mem://default")
	r, err := bucket.Get(context.Background(), blocks.ObjectKey(7, id), 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the block in the bucket: %d bytes, %v", len(got), err)
	}
	if st := tw.w.statsProto(); st.ShortCircuitBlocksWritten != 1 || st.ShortCircuitBytesWritten != uint64(len(data)) ||
		st.CachedBlocks != 1 || st.Used != uint64(len(data)) {
		t.Fatalf("stats: %+v", st)
	}
	// The bucket is emptied: the read below is served by the cache, whose
	// CRCs the commit computed.
	if err := bucket.Delete(context.Background(), blocks.ObjectKey(7, id)); err != nil {
		t.Fatal(err)
	}
	s := &sink{ctx: context.Background()}
	ref := &pb.BlockRef{Namespace: "default", InodeId: 7, BlockId: id, Length: uint64(len(data)),
		BlockToken: testToken(blocktoken.Read, "default", 7, "")}
	if err := tw.w.Read(&pb.ReadRequest{Block: ref, Length: uint64(len(data))}, s); err != nil || !bytes.Equal(s.got.Bytes(), data) {
		t.Fatalf("read of the written block from the cache: %d bytes, %v", s.got.Len(), err)
	}

	// A writer that knows the block's length gets room for that much, and
	// may not write more.
	resp, f = c.ask(&pb.ShortCircuitRequest{Write: writeHeader(tok).Write, Length: 100})
	if !resp.Ok || f == nil || resp.BlockSize != 100 {
		t.Fatalf("a write of 100 bytes: %+v", resp)
	}
	if _, err := f.WriteAt(make([]byte, 101), 0); err != nil {
		t.Fatal(err)
	}
	if resp, _ := c.ask(commit(101)); resp.Ok {
		t.Fatal("101 bytes committed into room for 100")
	}
}

// A block not committed as written is given up, its file removed: a
// commit of another length than the file's, a commit with no block open,
// any other request before the commit, and a connection that ends.
func TestShortCircuitWriteGivenUp(t *testing.T) {
	tw := newTrusting(t)
	c := dialShortCircuit(t, tw)
	tok := testToken(blocktoken.Write, "default", 7, "")
	open := func() (*pb.ShortCircuitResponse, *os.File) {
		t.Helper()
		resp, f := c.ask(writeHeader(tok))
		if !resp.Ok || f == nil {
			t.Fatalf("open: %+v", resp)
		}
		if _, err := f.WriteAt(make([]byte, 1000), 0); err != nil {
			t.Fatal(err)
		}
		return resp, f
	}
	for name, req := range map[string]*pb.ShortCircuitRequest{
		"a longer commit":  commit(1001),
		"a shorter commit": commit(999),
		"an empty commit":  commit(0),
		"a read":           {Block: tw.ref(testToken(blocktoken.Read, "default", 1, "")), Length: 10},
		"another write":    writeHeader(tok),
	} {
		opened, _ := open()
		resp, _ := c.ask(req)
		if req.Commit != nil && resp.Ok {
			t.Errorf("%s: committed", name)
		}
		if !gone(opened.Path) {
			t.Errorf("%s: the block's file is still there", name)
		}
		if req.Write != nil {
			c.ask(commit(0)) // give the new block up too
		}
	}
	if resp, _ := c.ask(commit(10)); resp.Ok || !strings.Contains(resp.Error, "opened no block") {
		t.Fatalf("a commit with no block open: %+v", resp)
	}
	opened, _ := open()
	c.conn.Close()
	for deadline := time.Now().Add(10 * time.Second); !gone(opened.Path); {
		if time.Now().After(deadline) {
			t.Fatal("the file of a block whose connection ended is still there")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Only the read's block is cached, and nothing is left reserved.
	if st := tw.w.statsProto(); st.ShortCircuitBlocksWritten != 0 || st.CachedBlocks != 1 || st.Used != uint64(len(tw.data)) {
		t.Fatalf("stats: %+v", st)
	}
	if st := tw.w.cache.Stats(); st.Reserved != 0 {
		t.Fatalf("%d bytes still reserved", st.Reserved)
	}
}
