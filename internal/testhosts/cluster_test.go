package testhosts_test

import (
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/testhosts"
)

// memberPort and workerPort are where the processes serve on their hosts:
// each host has an address of its own, so every member (and worker) can
// take the usual port.
const memberPort, workerPort = ":7700", ":7701"

// startGroup starts a namespace service of one member on each of hosts,
// with extra arguments for every member.
func startGroup(t *testing.T, hosts []*testhosts.Host, extra ...string) *testcluster.Group {
	t.Helper()
	var addrs []string
	for _, h := range hosts {
		addrs = append(addrs, h.Addr+memberPort)
	}
	return testcluster.StartGroupAt(t, testcluster.Placement{Members: len(hosts), Addrs: addrs,
		Launch: testhosts.Launcher(hosts)}, extra...)
}

// startWorker starts a worker on h for the service at meta, its state in
// dir, serving on the host's address.
func startWorker(t *testing.T, h *testhosts.Host, meta, dir string, extra ...string) *testcluster.Process {
	t.Helper()
	args := append([]string{"--listen", h.Addr + workerPort, "--cache-dir", filepath.Join(dir, "cache"),
		"--cache-size", "1GiB"}, extra...)
	return testcluster.StartWorkerWith(t, h.Start, meta, dir, args...)
}
