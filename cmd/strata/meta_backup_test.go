package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// A backup of a stopped follower's state, restored onto three fresh
// members of a new group at other addresses, serves every file written
// before it, byte for byte (inline files and files of blocks in the
// bucket), and nothing written after it; the tokens' signing keys came
// along (the old group's superuser token is accepted); the group it came
// from went on serving meanwhile. A second start with the same flags keeps
// the restored state; a backup over an existing directory is refused.
func TestBackupRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g := testcluster.StartGroup(t, 3)
	testcluster.StartWorker(t, g.Meta(), t.TempDir())
	c := g.Client("")
	files := map[string][]byte{}
	for i, size := range []int{0, 100, 4096, 4097, 1<<20 + 3, 3 << 20} {
		path := fmt.Sprintf("/backup/d%d/f%d", i%2, i)
		files[path] = make([]byte, size)
		_, _ = rand.Read(files[path])
		put(ctx, t, c, path, files[path])
	}
	if err := g.CaughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	leader, err := g.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	follower := leader%3 + 1
	g.Member(follower).Stop() // SIGTERM: its state flushed
	out := filepath.Join(t.TempDir(), "backup")
	if r := strata(t, time.Minute, nil, nil, "meta", "backup", "--data-dir", g.MemberDir(follower), out); r.code != 0 {
		t.Fatalf("strata meta backup: exit %d: %s", r.code, r.err)
	}
	g.Start(follower)
	put(ctx, t, c, "/backup/after", []byte("written after the backup"))

	r := testcluster.StartGroupAt(t, testcluster.Placement{Members: 3, Restored: true}, "--restore-from", out)
	testcluster.StartWorker(t, r.Meta(), t.TempDir())
	rc := r.Client("")
	for path, want := range files {
		if got := get(ctx, t, rc, path); !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes read back from the restored group, not the %d written", path, len(got), len(want))
		}
	}
	if _, err := rc.Stat(ctx, "/backup/after"); !errors.Is(err, fserr.ErrNotFound) {
		t.Errorf("a file written after the backup, in the restored group: %v", err)
	}
	old, err := client.New(client.Config{Meta: r.Meta(), Token: testcluster.AdminToken(t, g.Meta())})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Stat(ctx, "/backup/d0/f0"); err != nil {
		t.Errorf("the old group's superuser token in the restored group: %v", err)
	}
	if got := get(ctx, t, c, "/backup/after"); string(got) != "written after the backup" {
		t.Errorf("the group backed up lost a file: %q", got)
	}

	r.Kill(1) // the same flags again: the member keeps its state and rejoins
	r.Start(1)
	if err := r.CaughtUp(ctx); err != nil {
		t.Fatalf("a restored member restarted with --restore-from: %v", err)
	}
	if res := strata(t, time.Minute, nil, nil, "meta", "backup", "--data-dir", g.MemberDir(follower), out); res.code == 0 ||
		!strings.Contains(res.err, "exists") {
		t.Errorf("a backup over an existing directory: exit %d: %s", res.code, res.err)
	}
}

func put(ctx context.Context, t *testing.T, c *client.Client, path string, data []byte) {
	t.Helper()
	if _, err := c.Mkdirs(ctx, filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := c.Create(ctx, path, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func get(ctx context.Context, t *testing.T, c *client.Client, path string) []byte {
	t.Helper()
	f, err := c.Open(ctx, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
