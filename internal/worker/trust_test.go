package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

var testRing = blocktoken.Keyring{Secret: []byte("the test cluster's block secret."), Period: time.Hour}

// trustTest gives w what a heartbeat's answer would: the test ring's keys
// and the namespaces (name to bucket URI).
func trustTest(w *Worker, namespaces map[string]string) {
	resp := &pb.HeartbeatResponse{}
	for _, k := range testRing.Around(time.Now().UnixMilli()) {
		resp.BlockKeys = append(resp.BlockKeys, &pb.BlockKey{Id: k.ID, Secret: k.Secret, Expires: k.Expires})
	}
	for name, uri := range namespaces {
		resp.Namespaces = append(resp.Namespaces, &pb.NamespaceInfo{Name: name, StoreUri: uri})
	}
	w.trust.update(resp)
}

func testToken(mode blocktoken.Mode, ns string, inode uint64, object string) []byte {
	b, _ := testRing.Issue(time.Now().UnixMilli(), 10*time.Minute, mode, ns, inode, object)
	return b
}

// trusting is a worker with no namespace service, trusting the test ring,
// whose namespace "default" is a bucket in memory holding block 1/2, and
// namespace "other" another bucket. Any other URI it would open is
// recorded in opened.
type trusting struct {
	w      *Worker
	data   []byte
	opened []string
}

func newTrusting(t *testing.T) *trusting {
	tw := &trusting{data: bytes.Repeat([]byte("secret!!"), 1<<17)}
	stores := map[string]object.Store{"mem://default": mem.New(), "mem://other": mem.New()}
	w, err := New(Config{StateDir: t.TempDir(), Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 64 << 20}}},
		OpenStore: func(_ context.Context, uri string) (object.Store, error) {
			tw.opened = append(tw.opened, uri)
			if s, ok := stores[uri]; ok {
				return s, nil
			}
			return mem.New(), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := stores["mem://default"].Put(context.Background(), blocks.ObjectKey(1, 2), bytes.NewReader(tw.data), int64(len(tw.data))); err != nil {
		t.Fatal(err)
	}
	trustTest(w, map[string]string{"default": "mem://default", "other": "mem://other"})
	tw.w = w
	return tw
}

func (tw *trusting) ref(token []byte) *pb.BlockRef {
	return &pb.BlockRef{Namespace: "default", InodeId: 1, BlockId: 2, Length: uint64(len(tw.data)), BlockToken: token}
}

// refusals are the tokens a read of block 1/2 of namespace default must be
// refused with, by name.
func refusals() map[string][]byte {
	other := blocktoken.Keyring{Secret: []byte("another cluster's block secret.."), Period: time.Hour}
	foreign, _ := other.Issue(time.Now().UnixMilli(), time.Minute, blocktoken.Read, "default", 1, "")
	expired, _ := testRing.Issue(time.Now().Add(-time.Hour).UnixMilli(), time.Minute, blocktoken.Read, "default", 1, "")
	forged := testToken(blocktoken.Read, "default", 1, "")
	forged[len(forged)-1] ^= 1
	return map[string][]byte{
		"no token":            nil,
		"another file":        testToken(blocktoken.Read, "default", 3, ""),
		"another namespace":   testToken(blocktoken.Read, "other", 1, ""),
		"a write token":       testToken(blocktoken.Write, "default", 1, ""),
		"expired":             expired,
		"forged":              forged,
		"another cluster's":   foreign,
		"garbage":             []byte("let me in"),
		"cache mode's object": testToken(blocktoken.Read, "default", 1, "some/object"),
	}
}

func isPermission(err error) bool { return errors.Is(err, fserr.ErrPermission) }

func TestReadNeedsAValidToken(t *testing.T) {
	tw := newTrusting(t)
	for name, tok := range refusals() {
		t.Run(name, func(t *testing.T) {
			s := &sink{ctx: context.Background()}
			err := tw.w.Read(&pb.ReadRequest{Block: tw.ref(tok), Offset: 0, Length: 100}, s)
			if !isPermission(err) || s.got.Len() != 0 {
				t.Fatalf("read with %s: %v, %d bytes", name, err, s.got.Len())
			}
		})
	}
	s := &sink{ctx: context.Background()}
	if err := tw.w.Read(&pb.ReadRequest{Block: tw.ref(testToken(blocktoken.Read, "default", 1, "")), Offset: 0, Length: 100}, s); err != nil ||
		!bytes.Equal(s.got.Bytes(), tw.data[:100]) {
		t.Fatalf("read with a valid token: %v", err)
	}
	// A cache token (a superuser's, for strata admin load) reads too.
	s = &sink{ctx: context.Background()}
	if err := tw.w.Read(&pb.ReadRequest{Block: tw.ref(testToken(blocktoken.Cache, "default", 1, "")), Length: 100}, s); err != nil ||
		!bytes.Equal(s.got.Bytes(), tw.data[:100]) {
		t.Fatalf("read with a cache token: %v", err)
	}
	if _, err := tw.w.Cached(context.Background(), &pb.CachedRequest{Blocks: []*pb.BlockRef{tw.ref(nil)}}); !isPermission(err) {
		t.Errorf("cached without a token: %v", err)
	}
}

// Load and Uncache are a superuser's (strata admin load and uncache): they
// need a cache token, which the service issues to a superuser only; a
// reader's token does not do.
func TestLoadAndUncacheNeedACacheToken(t *testing.T) {
	tw := newTrusting(t)
	ctx := context.Background()
	refused := refusals()
	refused["a read token"] = testToken(blocktoken.Read, "default", 1, "")
	refused["a cache token for another file"] = testToken(blocktoken.Cache, "default", 3, "")
	for name, tok := range refused {
		if _, err := tw.w.Load(ctx, &pb.LoadRequest{Blocks: []*pb.BlockRef{tw.ref(tok)}}); !isPermission(err) {
			t.Errorf("load with %s: %v", name, err)
		}
	}
	cached := func() uint64 {
		t.Helper()
		r, err := tw.w.Cached(ctx, &pb.CachedRequest{Blocks: []*pb.BlockRef{tw.ref(testToken(blocktoken.Read, "default", 1, ""))}})
		if err != nil {
			t.Fatal(err)
		}
		return r.Bytes[0]
	}
	if n := cached(); n != 0 {
		t.Fatalf("%d bytes cached before any load", n)
	}
	admin := tw.ref(testToken(blocktoken.Cache, "default", 1, ""))
	if r, err := tw.w.Load(ctx, &pb.LoadRequest{Blocks: []*pb.BlockRef{admin}}); err != nil || r.Fetched != uint64(len(tw.data)) {
		t.Fatalf("load with a cache token: %v, %v", r, err)
	}
	for name, tok := range refused {
		if _, err := tw.w.Uncache(ctx, &pb.UncacheRequest{Blocks: []*pb.BlockRef{tw.ref(tok)}}); !isPermission(err) {
			t.Errorf("uncache with %s: %v", name, err)
		}
	}
	if n := cached(); n != uint64(len(tw.data)) {
		t.Fatalf("%d of %d bytes cached after refused uncaches", n, len(tw.data))
	}
	if r, err := tw.w.Uncache(ctx, &pb.UncacheRequest{Blocks: []*pb.BlockRef{admin}}); err != nil || r.Dropped != 1 {
		t.Fatalf("uncache with a cache token: %v, %v", r, err)
	}
	if n := cached(); n != 0 {
		t.Fatalf("%d bytes cached after the uncache", n)
	}
}

// A client cannot choose the bucket: a URI other than its namespace's is
// refused, before anything is opened, and so is a namespace the service
// did not name.
func TestClientChosenBucketRefused(t *testing.T) {
	tw := newTrusting(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "passwd"), []byte("root:x:0:0"), 0o600)
	ref := tw.ref(testToken(blocktoken.Read, "default", 1, ""))
	ref.StoreUri = "file://" + dir
	err := tw.w.Read(&pb.ReadRequest{Block: ref, Length: 10}, &sink{ctx: context.Background()})
	if !isPermission(err) || !strings.Contains(err.Error(), "not the bucket of namespace default") {
		t.Fatalf("read from a client's bucket URI: %v", err)
	}
	ws := &writeStream{ctx: context.Background(), msgs: []*pb.WriteRequest{
		{Msg: &pb.WriteRequest_Header{Header: &pb.WriteHeader{StoreUri: "file://" + dir, Namespace: "default", InodeId: 5,
			BlockSize: 1 << 20, BlockToken: testToken(blocktoken.Write, "default", 5, "")}}},
		{Msg: &pb.WriteRequest_Data{Data: []byte("pwned")}}}}
	if err := tw.w.Write(ws); !isPermission(err) {
		t.Fatalf("write to a client's bucket URI: %v", err)
	}
	ref = tw.ref(testToken(blocktoken.Read, "nowhere", 1, ""))
	ref.Namespace = "nowhere"
	if err := tw.w.Read(&pb.ReadRequest{Block: ref, Length: 10}, &sink{ctx: context.Background()}); !isPermission(err) {
		t.Fatalf("read in a namespace the service did not name: %v", err)
	}
	for _, uri := range tw.opened {
		if uri != "mem://default" && uri != "mem://other" {
			t.Errorf("the worker opened %s", uri)
		}
	}
	// The namespace's own URI, stated, is fine.
	ref = tw.ref(testToken(blocktoken.Read, "default", 1, ""))
	ref.StoreUri = "mem://default"
	if err := tw.w.Read(&pb.ReadRequest{Block: ref, Length: 10}, &sink{ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
}

func TestWriteNeedsAValidToken(t *testing.T) {
	tw := newTrusting(t)
	write := func(tok []byte, inode uint64, object string) error {
		return tw.w.Write(&writeStream{ctx: context.Background(), msgs: []*pb.WriteRequest{
			{Msg: &pb.WriteRequest_Header{Header: &pb.WriteHeader{Namespace: "default", InodeId: inode, BlockSize: 1 << 20,
				ObjectKey: object, BlockToken: tok}}},
			{Msg: &pb.WriteRequest_Data{Data: []byte("data")}}}})
	}
	for name, tok := range map[string][]byte{
		"no token":           nil,
		"a read token":       testToken(blocktoken.Read, "default", 7, ""),
		"another file":       testToken(blocktoken.Write, "default", 8, ""),
		"another namespace":  testToken(blocktoken.Write, "other", 7, ""),
		"another object":     testToken(blocktoken.Write, "default", 7, "b"),
		"block mode's token": testToken(blocktoken.Write, "default", 7, "a"),
	} {
		object := ""
		if strings.Contains(name, "object") {
			object = "a"
		}
		if name == "block mode's token" {
			tok, object = testToken(blocktoken.Write, "default", 7, ""), "a"
		}
		if err := write(tok, 7, object); !isPermission(err) {
			t.Errorf("write with %s: %v", name, err)
		}
	}
	if err := write(testToken(blocktoken.Write, "default", 7, ""), 7, ""); err != nil {
		t.Fatalf("write with a valid token: %v", err)
	}
}

// The short-circuit socket passes no descriptor without a valid read
// token, and a request's invalidation is not carried out either.
func TestShortCircuitNeedsAValidToken(t *testing.T) {
	tw := newTrusting(t)
	sock := filepath.Join(t.TempDir(), "sc.sock")
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tw.w.serveShortCircuit(ctx, lis)
	defer lis.Close()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ask := func(tok []byte) (*pb.ShortCircuitResponse, int) {
		t.Helper()
		if err := scproto.Write(conn, &pb.ShortCircuitRequest{Block: tw.ref(tok), Offset: 0, Length: 4096}, nil); err != nil {
			t.Fatal(err)
		}
		resp := &pb.ShortCircuitResponse{}
		fd, err := scproto.ReadFD(conn, resp)
		if err != nil {
			t.Fatal(err)
		}
		return resp, fd
	}
	for name, tok := range refusals() {
		resp, fd := ask(tok)
		if resp.Ok || fd >= 0 || !strings.Contains(resp.Error, "refused") {
			t.Errorf("short-circuit with %s: ok %v, descriptor %d, error %q", name, resp.Ok, fd, resp.Error)
		}
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
	resp, fd := ask(testToken(blocktoken.Read, "default", 1, ""))
	if !resp.Ok || fd < 0 {
		t.Fatalf("short-circuit with a valid token: %q", resp.Error)
	}
	f := os.NewFile(uintptr(fd), "cache file")
	defer f.Close()
	got := make([]byte, 8)
	if _, err := io.ReadFull(io.NewSectionReader(f, int64(resp.FirstPage), 8), got); err != nil || string(got) != "secret!!" {
		t.Fatalf("read the lent file: %q %v", got, err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the cache file's mode: %v %v", fi.Mode(), err)
	}
}

// writeStream is a Write stream that yields msgs, then EOF.
type writeStream struct {
	grpc.ServerStream
	ctx  context.Context
	msgs []*pb.WriteRequest
	resp *pb.WriteResponse
}

func (s *writeStream) Context() context.Context { return s.ctx }
func (s *writeStream) Recv() (*pb.WriteRequest, error) {
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return m, nil
}
func (s *writeStream) SendAndClose(r *pb.WriteResponse) error { s.resp = r; return nil }
