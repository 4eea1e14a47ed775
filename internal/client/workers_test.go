package client

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A worker is local when it names this host and its socket exists; a
// socket found is trusted for workerListTTL (reads do not stat it each
// time), one never found is not.
func TestLocalWorker(t *testing.T) {
	c := &Client{}
	c.workers.init(c)
	dir := t.TempDir()
	sock := filepath.Join(dir, "sc.sock")
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	here := &pb.WorkerInfo{Host: c.workers.host, UnixSocket: sock}
	if !c.workers.local(here) {
		t.Fatal("a worker on this host with its socket is not local")
	}
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	if !c.workers.local(here) {
		t.Fatal("a socket found a moment ago is no longer trusted")
	}
	for _, w := range []*pb.WorkerInfo{
		{Host: c.workers.host, UnixSocket: filepath.Join(dir, "none.sock")},
		{Host: c.workers.host + ".elsewhere", UnixSocket: sock},
		{Host: c.workers.host},
	} {
		if c.workers.local(w) {
			t.Fatalf("worker %v is local", w)
		}
	}
	c.cfg.NoShortCircuit = true
	if c.workers.local(here) {
		t.Fatal("local with NoShortCircuit")
	}
}

// listingMeta is a namespace service that lists no worker for its first
// empty answers, then one.
type listingMeta struct {
	pb.MetaServiceClient
	empty int64 // answers without a worker before the first with one; -1: always
	asked atomic.Int64
}

func (m *listingMeta) ListWorkers(context.Context, *pb.ListWorkersRequest, ...grpc.CallOption) (*pb.ListWorkersResponse, error) {
	if n := m.asked.Add(1); m.empty < 0 || n <= m.empty {
		return &pb.ListWorkersResponse{}, nil
	}
	return &pb.ListWorkersResponse{Workers: []*pb.WorkerInfo{{Id: "w-1", Address: "127.0.0.1:1"}}}, nil
}

// A worker lookup that finds none, as right after a failover to a leader
// that has not heard from the workers yet, asks again; none for
// workerWait is unavailable (temporary), not unsupported.
func TestWorkerLookupWaitsForAWorker(t *testing.T) {
	c := &Client{}
	c.workers.init(c)
	meta := &listingMeta{empty: 2}
	c.meta = meta
	list, err := c.workers.live(context.Background(), false)
	if err != nil || len(list) != 1 || meta.asked.Load() != 3 {
		t.Fatalf("got %v, %v after %d lookups; want the worker on the third", list, err, meta.asked.Load())
	}
	c = &Client{}
	c.workers.init(c)
	c.meta = &listingMeta{empty: -1}
	_, err = c.workers.live(context.Background(), false)
	if !errors.Is(err, fserr.ErrUnavailable) || errors.Is(err, fserr.ErrUnsupported) || !strings.Contains(err.Error(), "no live workers") {
		t.Fatalf("no worker at all: %v, want unavailable: no live workers", err)
	}
}

// A read that no worker could serve says why for each, on one line: a
// shell shows an error's first line only.
func TestOneLineKeepsEveryCause(t *testing.T) {
	got := oneLine([]error{errors.New("worker w-1 at a: the bucket is unavailable: x"),
		errors.Join(errors.New("worker w-2 at b: first"), errors.New("second"))})
	if want := "worker w-1 at a: the bucket is unavailable: x; worker w-2 at b: first; second"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
