package testhosts_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/testhosts"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// A client in a container of its own (its own network namespace and host
// name) with the worker's socket directory mounted into it, at another
// path, reads and writes short-circuit: no byte through the worker's RPC.
// The same client without the socket directory reads over the network,
// and says once why. Before short-circuit went by proof rather than host
// name, the first client read everything over the RPC, as seed 003's
// Spark executors under YARN did.
func TestShortCircuitFromAnotherHost(t *testing.T) {
	n := testhosts.New(t)
	metaHost, node, pod := n.Host("meta"), n.Host("node-1"), n.Host("executor-7f9c")
	g := startGroup(t, []*testhosts.Host{metaHost})
	sockets := filepath.Join(t.TempDir(), "run") // the worker's socket directory on the node
	if err := os.Mkdir(sockets, 0o755); err != nil {
		t.Fatal(err)
	}
	startWorker(t, node, g.Meta(), t.TempDir(), "--unix-socket", filepath.Join(sockets, "worker.sock"))
	mounted := bindMount(t, sockets) // the pod's view of it

	data := make([]byte, 24<<20+12345)
	_, _ = rand.Read(data)
	local := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stats := func() *pb.WorkerStats {
		st, err := testcluster.Client(t, g.Meta(), "").WorkerStats(ctx)
		if err != nil || len(st) != 1 {
			t.Fatalf("worker stats: %v, %v", st, err)
		}
		return st[0]
	}
	if h, _ := pod.Run("hostname"); strings.TrimSpace(h) == node.Name {
		t.Fatalf("the pod's host name is the node's")
	}

	run := func(scDir string, args ...string) (stdout []byte, stderr string) {
		t.Helper()
		t.Setenv("STRATA_META", g.Meta())
		t.Setenv("STRATA_PLAINTEXT", "1")
		t.Setenv("STRATA_TOKEN", testcluster.AdminToken(t, g.Meta()))
		t.Setenv("STRATA_SC_DIR", scDir)
		outFile := filepath.Join(t.TempDir(), "stdout")
		t.Setenv("OUT", outFile)
		stderr, err := pod.Run("sh", append([]string{"-c", `"$0" fs "$@" >"$OUT"`, testcluster.Binary(t)}, args...)...)
		if err != nil {
			t.Fatalf("strata fs %v on %s: %v", args, pod.Name, err)
		}
		stdout, err = os.ReadFile(outFile)
		if err != nil {
			t.Fatal(err)
		}
		return stdout, stderr
	}

	run(mounted, "-put", local, "/f")
	st := stats()
	if st.ShortCircuitBytesWritten != uint64(len(data)) {
		t.Errorf("the pod wrote %d bytes short-circuit, want all %d", st.ShortCircuitBytesWritten, len(data))
	}
	got, stderr := run(mounted, "-cat", "/f")
	if !bytes.Equal(got, data) {
		t.Fatalf("the pod read %d bytes back, not what it wrote (%d)", len(got), len(data))
	}
	st = stats()
	t.Logf("short-circuit: SC-READ %d bytes in %d leases, RPC read %d bytes; the client said: %q",
		st.ShortCircuitBytes, st.ShortCircuitOpens, st.RpcBytesRead, stderr)
	if st.ShortCircuitBytes == 0 || st.RpcBytesRead != 0 {
		t.Errorf("the pod read %d bytes short-circuit and %d over the worker's RPC; want all short-circuit",
			st.ShortCircuitBytes, st.RpcBytesRead)
	}

	empty := t.TempDir() // a pod without the socket directory mounted
	got, stderr = run(empty, "-cat", "/f")
	if !bytes.Equal(got, data) {
		t.Fatal("read over the network: not what was written")
	}
	if rpc := stats().RpcBytesRead; rpc < uint64(len(data)) {
		t.Errorf("without the socket directory, %d bytes over the worker's RPC; want all %d", rpc, len(data))
	}
	if strings.Count(stderr, "short-circuit socket this client cannot see") != 1 {
		t.Errorf("the client did not say once why it read over the network:\n%s", stderr)
	}
}

// bindMount mounts dir at a new path, as a container runtime mounts a
// host's directory into a container, and returns that path.
func bindMount(t *testing.T, dir string) string {
	t.Helper()
	at := filepath.Join(t.TempDir(), "mounted")
	if err := os.Mkdir(at, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(dir, at, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(at, syscall.MNT_DETACH) })
	return at
}
