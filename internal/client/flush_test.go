package client_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/token"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// writerEnv makes the test binary a writer process (TestMain): it writes a
// file, flushes (hflush or hsync), says how much it flushed, and waits to
// be killed.
const writerEnv = "STRATA_TEST_SYNCING_WRITER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(writerEnv); spec != "" {
		os.Exit(syncingWriter(spec))
	}
	os.Exit(m.Run())
}

// syncingWriter writes to the file spec names ("META PATH SIZE ROUNDS
// HOW"): rounds of size random bytes, each followed by a Sync (HOW: sync)
// or a Flush (flush), printing "synced N SUM" after each, then blocks. The
// parent kills it at some point.
func syncingWriter(spec string) int {
	var meta, path, how string
	var size, rounds int
	if _, err := fmt.Sscan(spec, &meta, &path, &size, &rounds, &how); err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 2
	}
	c, err := client.New(client.Config{Meta: meta, Token: os.Getenv(token.EnvVar)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 1
	}
	ctx := context.Background()
	w, err := c.Create(ctx, path, client.CreateOptions{BlockSize: 1 << 20})
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 1
	}
	var all []byte
	for range rounds {
		b := make([]byte, size)
		_, _ = rand.Read(b)
		all = append(all, b...)
		_, err := w.Write(b)
		switch {
		case err == nil && how == "sync":
			err = w.Sync()
		case err == nil:
			err = w.Flush()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			return 1
		}
		fmt.Printf("synced %d %x\n", len(all), all)
	}
	select {}
}

// startSyncingWriter runs the writer process, which flushes with how (sync
// or flush), and returns it and the content it had flushed when it said so
// rounds times.
func startSyncingWriter(t *testing.T, meta, path string, size, rounds int, how string) (*exec.Cmd, []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d %d %s", writerEnv, meta, path, size, rounds, how),
		token.EnvVar+"="+testcluster.AdminToken(t, meta))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 64<<20)
	var synced []byte
	for range rounds {
		if !sc.Scan() {
			t.Fatalf("the writer stopped: %v", sc.Err())
		}
		f := strings.Fields(sc.Text())
		n, _ := strconv.Atoi(f[1])
		if _, err := fmt.Sscanf(f[2], "%x", &synced); err != nil || len(synced) != n {
			t.Fatalf("writer said %q", sc.Text()[:40])
		}
	}
	return cmd, synced
}

// A writer's flushed bytes are visible to a reader that opens the file
// afterwards, before the writer closes it; the file's status says their
// length.
func TestFlushedBytesAreVisible(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	wc := testcluster.Client(t, addr, "")
	rc := testcluster.Client(t, addr, "")
	w, err := wc.Create(ctx, "/wal", client.CreateOptions{BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i, n := range []int{10, 3000, 5000, 2 << 20, 100, 1<<20 + 7} {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		want = append(want, b...)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			err = w.Flush()
		} else {
			err = w.Sync()
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := rc.Stat(ctx, "/wal")
		if err != nil || st.Length != uint64(len(want)) || !st.UnderConstruction {
			t.Fatalf("after flush %d: %+v %v", i, st, err)
		}
		got, err := rc.ReadFile(ctx, "/wal")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after flush %d: read %d bytes (%v), want %d", i, len(got), err, len(want))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := rc.ReadFile(ctx, "/wal"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after close: read %d bytes (%v), want %d", len(got), err, len(want))
	}
}

// A reader that opened a flushed file reads the bytes it took for the tail
// from the block that a later flush, or the close, committed over them.
func TestAReaderReadsBytesABlockTookOver(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	wc := testcluster.Client(t, addr, "")
	rc := testcluster.Client(t, addr, "")
	w, err := wc.Create(ctx, "/f", client.CreateOptions{BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	d := make([]byte, 3<<20)
	_, _ = rand.Read(d)
	const visible = 300_100
	for _, part := range [][]byte{d[:5000], d[5000:visible]} { // a block, then a tail
		if _, err := w.Write(part); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	r, err := rc.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(d[visible:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil { // blocks hold [0, 2 MiB + 5000) now
		t.Fatal(err)
	}
	got := make([]byte, visible)
	if n, err := r.ReadAt(got, 0); n != visible || err != nil || !bytes.Equal(got, d[:visible]) {
		t.Fatalf("read %d bytes (%v) of %d, equal %v", n, err, visible, bytes.Equal(got, d[:visible]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.ReadAt(got[:1000], 6000); n != 1000 || err != nil || !bytes.Equal(got[:1000], d[6000:7000]) {
		t.Fatalf("after close: %d bytes (%v)", n, err)
	}
}

// A flush after more than a tail's worth (8 MiB) since the last ends the
// block instead of sending it as the tail; smaller flushes after it send
// tails again.
func TestALargeFlushEndsTheBlock(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	wc := testcluster.Client(t, addr, "")
	rc := testcluster.Client(t, addr, "")
	w, err := wc.Create(ctx, "/big", client.CreateOptions{BlockSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, step := range []struct {
		n         int
		tailStart int
	}{
		{100_000, 100_000},         // the first flush ends the block
		{1000, 100_000},            // a tail
		{9 << 20, 101_000 + 9<<20}, // too much for a tail
		{5000, 101_000 + 9<<20},    // a tail again
		{3 << 20, 101_000 + 9<<20}, // and one that grows it
	} {
		b := make([]byte, step.n)
		_, _ = rand.Read(b)
		want = append(want, b...)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r, err := rc.Open(ctx, "/big")
		if err != nil {
			t.Fatal(err)
		}
		if got := client.TailStart(r); got != int64(step.tailStart) {
			t.Errorf("after %d bytes: the blocks end at %d, want %d", len(want), got, step.tailStart)
		}
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("after %d bytes: read %d (%v)", len(want), len(got), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := rc.ReadFile(ctx, "/big"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after close: read %d bytes (%v), want %d", len(got), err, len(want))
	}
}

// A flush the service refuses (another client recovered the lease) fails
// the writer: what it carried cannot be sent again, so later writes fail
// too, and the close does not remove the file, which keeps what was
// flushed before.
func TestAFailedFlushFailsTheWriter(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	wc := testcluster.Client(t, addr, "")
	other := testcluster.Client(t, addr, "")
	w, err := wc.Create(ctx, "/lost", client.CreateOptions{BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	flushed := make([]byte, 300_000)
	_, _ = rand.Read(flushed)
	if _, err := w.Write(flushed); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	recoverAll(t, other, "/lost")
	if _, err := w.Write(make([]byte, 2<<20)); err != nil {
		t.Fatal(err) // the blocks stream to a worker: the service is not asked yet
	}
	if err := w.Flush(); err == nil {
		t.Fatal("a flush after the lease was recovered succeeded")
	}
	if _, err := w.Write([]byte("more")); err == nil {
		t.Fatal("a write after a failed flush succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("close after a failed flush succeeded")
	}
	if got, err := other.ReadFile(ctx, "/lost"); err != nil || !bytes.Equal(got, flushed) {
		t.Fatalf("after the failed flush: %d bytes (%v), want the %d flushed", len(got), err, len(flushed))
	}
}

// A writer that flushed and was then killed loses nothing it flushed, by
// hflush or by hsync: lease recovery closes the file with every flushed
// byte, the ones no block held yet made a block by the service.
func TestFlushedBytesSurviveAKilledWriter(t *testing.T) {
	addr := dev(t)
	for _, how := range []string{"flush", "sync"} {
		t.Run(how, func(t *testing.T) {
			path := "/" + how
			cmd, flushed := startSyncingWriter(t, addr, path, 700_000, 4, how)
			killWriter(t, cmd)
			c := testcluster.Client(t, addr, "")
			wantRecovered(t, c, path, flushed)
		})
	}
}

// A worker killed after the writer flushed loses nothing flushed either:
// finished blocks are in the bucket and the rest in the service's log. Two
// workers: the one the writer wrote through is killed, the other stays.
func TestFlushedBytesSurviveAKilledWorker(t *testing.T) {
	dir := t.TempDir()
	meta := testcluster.Start(t, dir, "meta")
	ctx := context.Background()
	admin := testcluster.Client(t, meta.Addr, "")
	if err := admin.CreateNamespace(ctx, nsInfo("default", "file://"+t.TempDir())); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"flush", "sync"} {
		t.Run(how, func(t *testing.T) {
			first := testcluster.StartWorker(t, meta.Addr, t.TempDir())
			waitForWorkers(t, admin, 1)
			cmd, flushed := startSyncingWriter(t, meta.Addr, "/w-"+how, 600_000, 3, how)
			testcluster.StartWorker(t, meta.Addr, t.TempDir())
			waitForWorkers(t, admin, 2)
			// The service lists the dead worker too, until its heartbeats
			// are missed: a read that finds it refused goes to the other.
			first.Kill()
			killWriter(t, cmd)
			wantRecovered(t, admin, "/w-"+how, flushed)
		})
	}
}

// A member of the service killed after the writer flushed loses nothing
// flushed: the one member of a group, restarted on its state (its log
// holds the hflushes, written and not synced: the kill of a process
// leaves what it wrote), and the leader of three, which the others take
// over from.
func TestFlushedBytesSurviveAKilledMember(t *testing.T) {
	for _, members := range []int{1, 3} {
		t.Run(fmt.Sprintf("members=%d", members), func(t *testing.T) {
			ctx := context.Background()
			g := testcluster.StartGroup(t, members)
			admin := g.Client("")
			testcluster.StartWorker(t, g.Meta(), t.TempDir())
			waitForWorkers(t, admin, 1)
			cmd, flushed := startSyncingWriter(t, g.Meta(), "/f", 300_000, 3, "flush")
			leader, err := g.Leader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			g.Kill(leader)
			killWriter(t, cmd)
			if members == 1 {
				g.Start(leader)
			}
			wantRecovered(t, admin, "/f", flushed)
		})
	}
}

func killWriter(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// wantRecovered recovers path's lease and reads it: it must begin with
// every byte flushed.
func wantRecovered(t *testing.T, c *client.Client, path string, flushed []byte) {
	t.Helper()
	recoverAll(t, c, path)
	got, err := c.ReadFile(context.Background(), path)
	if err != nil || !bytes.HasPrefix(got, flushed) {
		t.Fatalf("after recovery: %d bytes (%v); %d were flushed", len(got), err, len(flushed))
	}
}

// recoverAll recovers the lease of path until the service says it is
// closed.
func recoverAll(t *testing.T, c *client.Client, path string) {
	t.Helper()
	for range 100 {
		closed, err := c.RecoverLease(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if closed {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling the recovery
	}
	t.Fatal("the file was never closed")
}

// A file written by one client is appended to by another, in a later
// session, while a third reads it: the reader of each flush sees the old
// bytes and the flushed new ones, and the closed file holds both.
func TestAppendByAnotherClient(t *testing.T) {
	ctx := context.Background()
	addr := dev(t)
	first := testcluster.Client(t, addr, "")
	old := make([]byte, 1500_000)
	_, _ = rand.Read(old)
	if err := first.WriteFile(ctx, "/log", old, client.CreateOptions{BlockSize: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second := testcluster.Client(t, addr, "")
	reader := testcluster.Client(t, addr, "")
	w, err := second.Append(ctx, "/log")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), old...)
	for _, n := range []int{100, 900_000} {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		want = append(want, b...)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got, err := reader.ReadFile(ctx, "/log"); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a reader during the append read %d bytes (%v), want %d", len(got), err, len(want))
		}
	}
	if _, err := reader.Append(ctx, "/log"); !errors.Is(err, fserr.ErrLeaseConflict) {
		t.Fatalf("a second appender: %v", err)
	}
	if _, err := first.Stat(ctx, "/log"); err == nil {
		t.Fatal("a closed client answered")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := reader.ReadFile(ctx, "/log"); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after the append: %d bytes (%v), want %d", len(got), err, len(want))
	}
	// Small appends, to a small file and to the result.
	if err := reader.WriteFile(ctx, "/tiny", []byte("abc"), client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"def", strings.Repeat("x", 5000)} {
		aw, err := reader.Append(ctx, "/tiny")
		if err == nil {
			_, err = io.WriteString(aw, s)
		}
		if err == nil {
			err = aw.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, err := reader.ReadFile(ctx, "/tiny"); err != nil || string(got) != "abcdef"+strings.Repeat("x", 5000) {
		t.Fatalf("tiny: %d bytes %v", len(got), err)
	}
	// Truncate cuts a closed file.
	if err := reader.Truncate(ctx, "/log", 1000); err != nil {
		t.Fatal(err)
	}
	if got, err := reader.ReadFile(ctx, "/log"); err != nil || !bytes.Equal(got, old[:1000]) {
		t.Fatalf("truncated: %d bytes %v", len(got), err)
	}
	if err := reader.Truncate(ctx, "/log", 2000); !errors.Is(err, fserr.ErrInvalidArgument) {
		t.Fatalf("a truncate past the end: %v", err)
	}
}

// A failed append to an empty file leaves the file: it existed before the
// writer (a new file's failed write removes it).
func TestFailedAppendKeepsAnEmptyFile(t *testing.T) {
	meta := testcluster.Start(t, t.TempDir(), "meta") // no worker: past the inline limit, writes fail
	ctx := context.Background()
	c := testcluster.Client(t, meta.Addr, "")
	if err := c.CreateNamespace(ctx, nsInfo("default", "file://"+t.TempDir())); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "/empty", nil, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.Append(ctx, "/empty")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 10_000)); err == nil {
		t.Fatal("a write with no worker succeeded")
	}
	if err := w.Close(); err == nil {
		t.Fatal("close after a failed write succeeded")
	}
	if _, err := c.Stat(ctx, "/empty"); err != nil {
		t.Fatalf("the appended file is gone: %v", err)
	}
}

func nsInfo(name, uri string) *pb.NamespaceInfo {
	return &pb.NamespaceInfo{Name: name, Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: uri}
}

// waitForWorkers polls until n workers have registered.
func waitForWorkers(t *testing.T, c *client.Client, n int) {
	t.Helper()
	for range 3000 {
		if st, err := c.WorkerStats(context.Background()); err == nil && len(st) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling for the registration
	}
	t.Fatalf("fewer than %d workers registered", n)
}
