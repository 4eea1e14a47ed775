package worker_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/worker"
)

// TestShortCircuitSocketReachesEveryLocalUser: the socket's mode lets
// every local user connect (docs/security.md: what it answers is what a
// block token allows), whatever the umask, which left it 0755 (issue 32).
func TestShortCircuitSocketReachesEveryLocalUser(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	sock := filepath.Join(t.TempDir(), "worker.sock")
	startLocalWith(t, 1<<20, nil, func(c *worker.Config, _ *retry.Policy) { c.UnixSocket = sock })
	info, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != fs.ModeSocket || info.Mode().Perm() != worker.SocketMode {
		t.Fatalf("the short-circuit socket is %v, want a socket %04o", info.Mode(), worker.SocketMode)
	}
}
