package main_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// The CLI against real servers: what a user types, and what the terminal
// shows (stdout, stderr and the exit status). No command destroys data
// silently.

// cliResult is what one command printed and returned.
type cliResult struct {
	stdout, stderr string
	code           int
}

// strataCLI runs the strata binary with args; the test's context bounds it.
func strataCLI(ctx context.Context, t *testing.T, args ...string) cliResult {
	t.Helper()
	cmd := exec.CommandContext(ctx, testcluster.Binary(t), args...)
	cmd.Env = append(os.Environ(), "STRATA_NO_PROGRESS=1", "STRATA_PLAINTEXT=1")
	cmd.Env = append(cmd.Env, testcluster.CLIEnv(t, args, nil)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := cliResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("strata %q: %v", args, err)
	}
	return r
}

// want fails the test unless r exited with code and its outputs match the
// patterns (regular expressions, anchored; "" matches only nothing).
func (r cliResult) want(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	match := func(pattern, s string) bool { return regexp.MustCompile(`\A` + pattern + `\z`).MatchString(s) }
	if r.code != code || !match(stdout, r.stdout) || !match(stderr, r.stderr) {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", r.code, code, r.stdout, stdout, r.stderr, stderr)
	}
}

// testContext bounds a test: every command must return before it ends.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// q quotes text for a pattern.
func q(s string) string { return regexp.QuoteMeta(s) }

// localFile writes n random bytes to a new local file.
func localFile(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// countFiles counts the regular files below dir whose names match suffix.
func countFiles(t *testing.T, dir, suffix string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, suffix) {
			n++
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return n
}

// eventually polls cond until it holds, failing the test when ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not before the test's deadline", what)
		case <-time.After(20 * time.Millisecond): // polling, not synchronisation
		}
	}
}

// A namespace that holds anything is not deleted by "admin ns delete",
// which says what it holds; --force moves it to the trash, its objects
// kept, from which "ns restore" brings it back; --force --skip-trash
// removes it for good, its objects and the worker's cached pages with it.
func TestNamespaceDeleteIsSafe(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	p := testcluster.StartDev(t, dir)
	meta := "--meta=" + p.Addr
	bucket := filepath.Join(dir, "bucket")
	src := localFile(t, 3_000_000)
	strataCLI(ctx, t, "fs", meta, "-mkdir", "-p", "/a/b").want(t, 0, "", "")
	strataCLI(ctx, t, "fs", meta, "-put", src, "/a/b/f").want(t, 0, "", "")
	objects := countFiles(t, filepath.Join(bucket, "blocks"), "")
	if objects == 0 || countFiles(t, dir+"/worker", ".data") == 0 {
		t.Fatalf("%d objects in the bucket, %d blocks cached: the put stored nothing", objects, countFiles(t, dir+"/worker", ".data"))
	}
	holds := q("1 file, 2 directories, 3000000 bytes (2.9MiB)")

	strataCLI(ctx, t, "admin", "ns", "delete", meta, "default").want(t, 1, "",
		q("strata: namespace default is not empty: it holds ")+holds+q(". Nothing was deleted.")+"\n"+
			q("  strata admin ns delete --force default                moves it to the trash, restorable for 24h")+"\n"+
			q("  strata admin ns delete --force --skip-trash default   deletes it and its objects for good now")+"\n")
	strataCLI(ctx, t, "admin", "ns", "delete", meta, "--skip-trash", "default").want(t, 1, "",
		q("strata: --skip-trash removes a namespace for good: it needs --force too")+"\n")
	strataCLI(ctx, t, "fs", meta, "-count", "/").want(t, 0, `\s+3\s+1\s+3000000 /`+"\n", "")

	strataCLI(ctx, t, "admin", "ns", "delete", meta, "--force", "default").want(t, 0,
		q("Deleting namespace default: ")+holds+".\n"+
			q("Moved namespace default to the trash: ")+holds+".\n"+
			q("Its objects stay in file://"+bucket+" until ")+`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`+
			q("; until then 'strata admin ns restore default' brings it back.")+"\n", "")
	strataCLI(ctx, t, "fs", meta, "-ls", "/").want(t, 1, "", q("ls: `/': No such namespace")+"\n")
	strataCLI(ctx, t, "admin", "ns", "list", meta).want(t, 0,
		`NAME\s+MODE\s+STORE\s+CREATED\s+STATE\n`+`default\s+block\s+`+q("file://"+bucket)+`\s+\S+ \S+\s+in the trash until \S+ \S+ UTC\n`, "")
	if got := countFiles(t, filepath.Join(bucket, "blocks"), ""); got != objects {
		t.Fatalf("%d objects in the bucket of a namespace in the trash, want %d", got, objects)
	}

	strataCLI(ctx, t, "admin", "ns", "restore", meta, "default").want(t, 0, q("Restored namespace default: ")+holds+".\n", "")
	got := strataCLI(ctx, t, "fs", meta, "-cat", "/a/b/f")
	if want, _ := os.ReadFile(src); got.code != 0 || got.stdout != string(want) {
		t.Fatalf("the restored file: exit %d, %d bytes, %s", got.code, len(got.stdout), got.stderr)
	}

	strataCLI(ctx, t, "admin", "ns", "delete", meta, "--force", "--skip-trash", "default").want(t, 0,
		q("Deleting namespace default: ")+holds+".\n"+
			q("Deleted namespace default for good: ")+holds+q("; its objects are being deleted from its bucket.")+"\n", "")
	eventually(ctx, t, "the bucket's objects deleted", func() bool { return countFiles(t, filepath.Join(bucket, "blocks"), "") == 0 })
	eventually(ctx, t, "the worker's cached pages dropped", func() bool { return countFiles(t, dir+"/worker", ".data") == 0 })
	strataCLI(ctx, t, "admin", "ns", "restore", meta, "default").want(t, 1, "",
		q("strata: restoreNamespace default: no such namespace")+"\n")
}

// A namespace's time in the trash ends: the service removes it, and its
// bucket's objects, on its own.
func TestNamespaceTrashEnds(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	p := testcluster.StartDev(t, dir, "--namespace-trash", "1s")
	meta := "--meta=" + p.Addr
	blocks := filepath.Join(dir, "bucket", "blocks")
	strataCLI(ctx, t, "fs", meta, "-put", localFile(t, 100_000), "/f").want(t, 0, "", "")
	strataCLI(ctx, t, "admin", "ns", "delete", meta, "--force", "default").want(t, 0, `(?s)Deleting .*Moved namespace default to the trash: .*`, "")
	eventually(ctx, t, "the namespace removed for good", func() bool {
		return !strings.Contains(strataCLI(ctx, t, "admin", "ns", "list", meta).stdout, "default")
	})
	eventually(ctx, t, "the bucket's objects deleted", func() bool { return countFiles(t, blocks, "") == 0 })
	// Meanwhile, and after, no warning about the namespace's bucket.
	if strings.Contains(p.Stderr(), "WARN") {
		t.Fatalf("the service warned:\n%s", p.Stderr())
	}
}

// A namespace's store URI and name are checked when it is created, with
// errors that say what is wrong; nothing is created.
func TestNamespaceCreateValidates(t *testing.T) {
	ctx := testContext(t)
	p := testcluster.StartDev(t, t.TempDir())
	meta := "--meta=" + p.Addr
	strataCLI(ctx, t, "admin", "ns", "create", meta, "nope2", "--store", "bogus://x").want(t, 1, "",
		q(`strata: createNamespace nope2: store "bogus://x": "bogus://x": unknown scheme (want file, s3 or mem)`)+"\n")
	strataCLI(ctx, t, "admin", "ns", "create", meta, "rel", "--store", "file://relative/dir").want(t, 1, "",
		q(`strata: createNamespace rel: store "file://relative/dir": "file://relative/dir": host "relative": want file:///absolute/path`)+"\n")
	strataCLI(ctx, t, "admin", "ns", "create", meta, "UPPER", "--store", "file://"+t.TempDir()).want(t, 1, "",
		q("strata: createNamespace UPPER: not a valid namespace name: a name is 1 to 63 lower-case letters, digits, '-' and '_', starting with a letter or a digit")+"\n")
	strataCLI(ctx, t, "admin", "ns", "list", meta).want(t, 0, `NAME.*\ndefault .*\n`, "")
	strataCLI(ctx, t, "admin", "ns", "create", meta, "lake", "--store", "file://"+t.TempDir()).want(t, 0, "", "")
}

// rm -r / is refused with a message that says why; with the trash on (the
// binary's default), rm moves a path to the user's trash, and -skipTrash
// deletes it.
func TestRmOfTheRootAndTheTrash(t *testing.T) {
	ctx := testContext(t)
	p := testcluster.StartDev(t, t.TempDir())
	meta := "--meta=" + p.Addr
	user := testcluster.Superuser()
	strataCLI(ctx, t, "fs", meta, "-touchz", "/f", "/g").want(t, 0, "", "")
	strataCLI(ctx, t, "fs", meta, "-rm", "-r", "/").want(t, 1, "",
		q("rm: Cannot delete /: the root directory is not allowed to be deleted")+"\n")
	strataCLI(ctx, t, "fs", meta, "-rm", "/f").want(t, 0,
		q("Moved: 'strata://default/f' to trash at: strata://default/user/"+user+"/.Trash/Current/f")+"\n", "")
	strataCLI(ctx, t, "fs", meta, "-rm", "-skipTrash", "/g").want(t, 0, "Deleted /g\n", "")
	strataCLI(ctx, t, "fs", meta, "-ls", "-C", "-R", "/").want(t, 0,
		q(fmt.Sprintf("/user\n/user/%[1]s\n/user/%[1]s/.Trash\n/user/%[1]s/.Trash/Current\n/user/%[1]s/.Trash/Current/f\n", user)), "")
}

// Removing a voter is refused when the voters left that answer the leader
// would not be a majority of them; --force removes it anyway.
func TestMemberRemoveKeepsQuorum(t *testing.T) {
	ctx := testContext(t)
	g := testcluster.StartGroup(t, 3)
	leader, err := g.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	down, alive := leader%3+1, (leader+1)%3+1
	g.Kill(down)
	eventually(ctx, t, "the leader sees the member down", func() bool {
		out := strataCLI(ctx, t, "admin", "member", "list", "--meta", g.Addrs[leader-1]).stdout
		return regexp.MustCompile(fmt.Sprintf(`(?m)^%d .*voter \(not answering the leader\)$`, down)).MatchString(out)
	})
	lo, hi := min(leader, down), max(leader, down)
	strataCLI(ctx, t, "admin", "member", "remove", "--meta", g.Meta(), fmt.Sprint(alive)).want(t, 1, "",
		q(fmt.Sprintf("strata: remove member %d: the group would lose its quorum: voters %d and %d would be left, "+
			"2 of them must answer, and member %d does not (start it again first, or remove member %d with --force)",
			alive, lo, hi, down, alive))+"\n")
	strataCLI(ctx, t, "admin", "member", "remove", "--meta", g.Meta(), "--force", fmt.Sprint(alive)).want(t, 0,
		`MEMBER\s+ADDRESS\s+KIND\n`+fmt.Sprintf(`%d\s+\S+\s+voter\n%d\s+\S+\s+voter\n`, lo, hi), "")
}

// A start that cannot serve on its address (in use) says so and creates
// nothing: no data directory, no worker state.
func TestFailedStartCreatesNothing(t *testing.T) {
	ctx := testContext(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	inUse := q("strata: --listen "+addr+": bind: address already in use") + "\n"
	for _, args := range [][]string{
		{"server", "--dev", "--listen", addr, "--data-dir"},
		{"meta", "--listen", addr, "--data-dir"},
		{"worker", "--listen", addr, "--meta", "127.0.0.1:1", "--state-dir"},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		strataCLI(ctx, t, append(args, dir)...).want(t, 1, "", inUse)
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %s exists after the failed start (%v)", args[0], dir, err)
		}
	}
}

// A deleted file's blocks leave the dev server's disk: the bucket's
// objects, and the worker's cached pages of them.
func TestDeletedBlocksLeaveTheCache(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	p := testcluster.StartDev(t, dir)
	meta := "--meta=" + p.Addr
	blocks, cache := filepath.Join(dir, "bucket", "blocks"), filepath.Join(dir, "worker")
	strataCLI(ctx, t, "fs", meta, "-put", localFile(t, 3_000_000), "/f").want(t, 0, "", "")
	if countFiles(t, blocks, "") == 0 || countFiles(t, cache, ".data") == 0 {
		t.Fatalf("%d objects, %d cached blocks: the put stored nothing", countFiles(t, blocks, ""), countFiles(t, cache, ".data"))
	}
	strataCLI(ctx, t, "fs", meta, "-rm", "-skipTrash", "/f").want(t, 0, "Deleted /f\n", "")
	eventually(ctx, t, "the block gone from the bucket and the cache", func() bool {
		return countFiles(t, blocks, "") == 0 && countFiles(t, cache, ".data") == 0
	})
}
