package client

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// fakeWorkerSocket serves short-circuit hellos at path as worker id, with
// a key of its own, until the test ends, and returns the worker as the
// service would list it. It answers nothing else.
func fakeWorkerSocket(t *testing.T, path, id string) *pb.WorkerInfo {
	t.Helper()
	var name atomic.Value
	name.Store(id)
	return serveHellos(t, path, &name)
}

// serveHellos answers hellos at path as the worker named by id's current
// value.
func serveHellos(t *testing.T, path string, id *atomic.Value) *pb.WorkerInfo {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.AcceptUnix()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					req := &pb.ShortCircuitRequest{}
					if scproto.Read(c, req) != nil {
						return
					}
					resp := &pb.ShortCircuitResponse{Error: "a fake worker answers hellos only"}
					if sig, err := scproto.SignHello(key, req.Hello); err == nil {
						resp = &pb.ShortCircuitResponse{Ok: true, WorkerId: id.Load().(string), HelloSignature: sig}
					}
					if err := scproto.Write(c, resp, nil); err != nil && !errors.Is(err, net.ErrClosed) {
						return
					}
				}
			}()
		}
	}()
	return &pb.WorkerInfo{Id: id.Load().(string), UnixSocket: path, ScKey: pub}
}
