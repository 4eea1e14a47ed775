package client

import (
	"os"
	"path/filepath"
	"testing"

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
