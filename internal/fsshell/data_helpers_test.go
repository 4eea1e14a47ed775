package fsshell

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// testBlockSize makes files of a few MiB many blocks long.
const testBlockSize = 1 << 20

// newDataEnv is newEnv with a worker in the test's process, so that files
// of any size can be written, cut into blocks of testBlockSize.
func newDataEnv(t *testing.T) *env {
	t.Helper()
	srv := testcluster.StartInProcess(t, func(c *metaserver.Config) { c.Namespace.BlockSize = testBlockSize })
	startWorker(t, srv)
	return &env{t: t, srv: srv, addr: srv.Addr, super: testcluster.Superuser()}
}

// startWorker runs a worker for srv and returns once the service knows it.
// The worker reaches the service through a spy that reports its first
// heartbeat, so nothing polls.
func startWorker(t *testing.T, srv *testcluster.InProcess) {
	t.Helper()
	spy := &heartbeatSpy{MetaServiceServer: srv.Server, in: make(chan struct{})}
	spyAddr := serve(t, func(g *grpc.Server) { pb.RegisterMetaServiceServer(g, spy) })
	// NB: the state directory holds the worker's Unix socket, whose path
	// must stay short; t.TempDir's names the test.
	state, err := os.MkdirTemp("", "fsw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	w, err := worker.New(worker.Config{StateDir: state, Meta: spyAddr, Token: testcluster.AdminToken(t, srv.Addr),
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 256 << 20}}}})
	if err != nil {
		t.Fatal(err)
	}
	lis := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done; w.Close() })
	select {
	case <-spy.in:
	case <-done:
		t.Fatal("the worker stopped before its first heartbeat")
	case <-time.After(30 * time.Second):
		t.Fatal("no heartbeat from the worker within 30s")
	}
}

// heartbeatSpy is the namespace service as the worker sees it: the same
// server, closing in when a first heartbeat has been taken.
type heartbeatSpy struct {
	pb.MetaServiceServer
	once sync.Once
	in   chan struct{}
}

func (s *heartbeatSpy) Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	resp, err := s.MetaServiceServer.Heartbeat(ctx, r)
	if err == nil {
		s.once.Do(func() { close(s.in) })
	}
	return resp, err
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// serve runs a gRPC server on loopback until the test ends.
func serve(t *testing.T, register func(*grpc.Server)) string {
	t.Helper()
	lis := listen(t)
	g := grpc.NewServer()
	register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// randomBytes returns n bytes that depend only on seed.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// writeRandom writes n random bytes to a new local file and returns them.
func writeRandom(t *testing.T, path string, seed uint64, n int) []byte {
	t.Helper()
	b := randomBytes(seed, n)
	writeLocal(t, path, string(b))
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// shaFile is the SHA-256 of a local file.
func shaFile(t *testing.T, path string) string {
	t.Helper()
	return sha([]byte(readLocal(t, filepath.Clean(path))))
}
