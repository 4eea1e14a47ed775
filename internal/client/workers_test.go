package client

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A worker is local when the worker behind the socket the client finds
// proves to be it, whatever the host names; an answer found is trusted
// for workerListTTL (reads do not ask each time). A socket that answers as
// another worker, or signs with another key, is not the worker's; a
// short-circuit directory is where the client looks for the sockets by
// name.
func TestLocalWorker(t *testing.T) {
	c := &Client{}
	c.workers.init(c)
	var logs strings.Builder
	c.cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()
	here := fakeWorkerSocket(t, filepath.Join(dir, "sc.sock"), "w-here")
	if !c.workers.local(here) {
		t.Fatalf("a worker whose socket proves it is not local: %s", logs.String())
	}
	if err := os.Remove(here.UnixSocket); err != nil {
		t.Fatal(err)
	}
	if !c.workers.local(here) {
		t.Fatal("a socket proved a moment ago is no longer trusted")
	}
	other := fakeWorkerSocket(t, filepath.Join(dir, "other.sock"), "w-other")
	impostor := fakeWorkerSocket(t, filepath.Join(dir, "impostor.sock"), "w-here")
	for _, w := range []*pb.WorkerInfo{
		{Id: "w-1", Host: "elsewhere", UnixSocket: filepath.Join(dir, "none.sock"), ScKey: here.ScKey},
		{Id: "w-2", UnixSocket: other.UnixSocket, ScKey: other.ScKey},      // the socket is w-other's
		{Id: "w-here", UnixSocket: impostor.UnixSocket, ScKey: here.ScKey}, // signs with another key
		{Id: "w-3"},
	} {
		for range 2 { // asked twice: each reason is logged once
			if c.workers.local(w) {
				t.Fatalf("worker %v is local", w)
			}
		}
	}
	if n := strings.Count(logs.String(), "\n"); n != 3 {
		t.Errorf("%d lines logged, want 3 (each worker's reason once, no socket once):\n%s", n, logs.String())
	}

	shared := t.TempDir() // a container's view of the workers' sockets
	w := fakeWorkerSocket(t, filepath.Join(shared, "worker.sock"), "w-4")
	w.UnixSocket, w.Host = "/var/lib/strata/worker/worker.sock", "the-workers-host"
	if c.workers.local(w) {
		t.Fatal("a worker whose socket is not at its path is local")
	}
	c.workers.mu.sockets = nil
	c.cfg.ShortCircuitDir = shared
	if !c.workers.local(w) {
		t.Fatalf("a worker whose socket is in the short-circuit directory is not local: %s", logs.String())
	}
	c.cfg.NoShortCircuit = true
	if c.workers.local(w) {
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
