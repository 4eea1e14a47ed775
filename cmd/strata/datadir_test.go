package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/privdir"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The data directory holds the cluster's signing keys (issue 32: with a
// data directory made 0755 beforehand, another local user read them).

// TestDataDirOpenToOthersIsRefused starts a member and a dev server on a
// directory made 0755 beforehand: each refuses, saying why and what to do,
// and writes nothing there.
func TestDataDirOpenToOthersIsRefused(t *testing.T) {
	for _, args := range [][]string{{"meta"}, {"server", "--dev", "--client-token-file="}} {
		t.Run(args[0], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append(args, "--data-dir", dir, "--listen", "127.0.0.1:0")
			strata(t, 20*time.Second, nil, nil, args...).expect(t, 1, "strata: --data-dir "+dir+
				" is open to other users (mode 0755), and it holds the cluster's signing keys: close it (chmod 700 "+
				dir+"), or start with --allow-shared-data-dir to leave it so (its state, log, snapshots and token "+
				"stay 0700/0600 either way; docs/security.md)\n", args...)
			if names, err := os.ReadDir(dir); err != nil || len(names) != 0 {
				t.Fatalf("a refused start wrote %v in the data directory (%v)", names, err)
			}
		})
	}
}

// TestDataDirIsPrivate starts members on a new data directory and on one
// made 0755 beforehand with --allow-shared-data-dir, under a umask that
// leaves files 0644, has them write, and stops them: what they wrote
// (state/, raft/, snapshots/, token) is 0700 and 0600 all the way down,
// the dev server's bucket/ is 0700; a new data directory is 0700, a shared
// one stays as it was made.
func TestDataDirIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the processes started inherit it
	t.Cleanup(func() { syscall.Umask(old) })
	for _, c := range []struct {
		name   string
		args   []string
		before os.FileMode // 0: the directory does not exist
	}{
		{"meta new", []string{"meta"}, 0},
		{"meta shared", []string{"meta", "--allow-shared-data-dir"}, 0o755},
		{"dev new", []string{"server", "--dev", "--client-token-file="}, 0},
		{"dev shared", []string{"server", "--dev", "--client-token-file=", "--allow-shared-data-dir"}, 0o755},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new", "data")
			if c.before != 0 {
				if err := os.MkdirAll(dir, c.before); err != nil {
					t.Fatal(err)
				}
			}
			p := testcluster.Start(t, dir, c.args...)
			writeSome(t, p.Addr)
			p.Stop()
			if warned := strings.Contains(p.Stderr(), "started anyway (--allow-shared-data-dir)"); warned != (c.before != 0) {
				t.Errorf("warned of a shared data directory: %v\n%s", warned, p.Stderr())
			}
			want := c.before
			if want == 0 {
				want = privdir.DirMode
			}
			if got := permOf(t, dir); got != want {
				t.Errorf("the data directory is %04o, want %04o", got, want)
			}
			if c.args[0] == "server" {
				// The files' blocks, in the local bucket's own layout.
				if got := permOf(t, filepath.Join(dir, "bucket")); got != privdir.DirMode {
					t.Errorf("the dev server's bucket is %04o, want %04o", got, privdir.DirMode)
				}
			}
			for _, part := range []string{"state", "raft", "snapshots", "token"} {
				if got := permOf(t, filepath.Join(dir, part)); got != privdir.DirMode && got != privdir.FileMode {
					t.Errorf("%s is %04o", part, got)
				}
				shared, err := privdir.Shared(filepath.Join(dir, part))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range shared {
					t.Errorf("open to others: %s", s)
				}
			}
		})
	}
}

// permOf returns the permission bits of path.
func permOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// writeSome has the service at addr issue a token and create a namespace,
// so that its log and state hold entries besides its keys.
func writeSome(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	testcluster.Token(t, addr, "alice")
	err := testcluster.Client(t, addr, "").CreateNamespace(ctx, &pb.NamespaceInfo{Name: "written",
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: "file://" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
}
