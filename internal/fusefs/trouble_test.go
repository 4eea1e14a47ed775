package fusefs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/testcluster"
)

// reader reads files through a mount over and over, from several
// threads, as a training job's loader does, and records every error;
// each pass opens, reads whole and checks the file. It stops when told.
type reader struct {
	passes atomic.Int64
	mu     sync.Mutex
	errs   []error
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startReaders(paths []string, want [][]byte, threads int) *reader {
	r := &reader{stop: make(chan struct{})}
	for i := range threads {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for n := i; ; n++ {
				select {
				case <-r.stop:
					return
				default:
				}
				k := n % len(paths)
				got, err := readUncached(paths[k])
				if err == nil && !bytes.Equal(got, want[k]) {
					err = fmt.Errorf("%s: read %d bytes, not what was written (%d)", paths[k], len(got), len(want[k]))
				}
				if err != nil {
					r.mu.Lock()
					r.errs = append(r.errs, err)
					r.mu.Unlock()
				}
				r.passes.Add(1)
			}
		}()
	}
	return r
}

// readUncached reads the file at p whole, and then has the kernel drop
// its pages of it, so that the next read asks the mount again.
func readUncached(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	return b, err
}

// waitPasses waits until the readers made n more passes (whether they
// succeeded or not), or fails the test after d.
func (r *reader) waitPasses(t *testing.T, n int64, d time.Duration) {
	t.Helper()
	target := r.passes.Load() + n
	deadline := time.Now().Add(d)
	for r.passes.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the readers made %d passes in %v, want %d", r.passes.Load()-target+n, d, n)
		}
		time.Sleep(5 * time.Millisecond) // NB: polling a counter, not waiting for an event
	}
}

func (r *reader) finish(t *testing.T) {
	t.Helper()
	close(r.stop)
	r.wg.Wait()
	if len(r.errs) > 0 {
		t.Fatalf("%d reads failed, the first: %v", len(r.errs), r.errs[0])
	}
}

// putFiles writes n files of size bytes through the mount.
func putFiles(t *testing.T, m *mountProc, n int, size int) ([]string, [][]byte) {
	t.Helper()
	return putFilesNamed(t, m, "r", n, size)
}

func putFilesNamed(t *testing.T, m *mountProc, prefix string, n int, size int) ([]string, [][]byte) {
	t.Helper()
	var paths []string
	var data [][]byte
	for i := range n {
		b := make([]byte, size)
		newPRNG(int64(i) + 99).Read(b)
		p := m.path(fmt.Sprintf("%s%d", prefix, i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths, data = append(paths, p), append(data, b)
	}
	return paths, data
}

// TestServingProcessKilled: the serving process of a mount is killed
// (SIGKILL) while readers read through it and a file is held open; its
// supervisor starts another on the same connection, which the kernel asks
// again for every request left unanswered. No read fails, the open file
// reads on, and names looked up before are still known.
func TestServingProcessKilled(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	paths, data := putFiles(t, m, 3, 3*testBlock+17)
	held, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	first := make([]byte, testBlock)
	if _, err := io.ReadFull(held, first); err != nil {
		t.Fatal(err)
	}
	r := startReaders(paths, data, 4)
	for round := range 2 {
		r.waitPasses(t, 3, time.Minute)
		syscall.Kill(m.servePID(), syscall.SIGKILL)
		if !m.out.wait("took the mount over", time.Minute, m.done) {
			t.Fatalf("round %d: no serving process took over:\n%s", round, m.out)
		}
		m.out = newLinesFrom(m.out) // the next round waits for the next takeover
		r.waitPasses(t, 3, time.Minute)
	}
	r.finish(t)
	rest, err := io.ReadAll(held)
	if err != nil || !bytes.Equal(append(first, rest...), data[0]) {
		t.Fatalf("the file held open across the kills: %d bytes, %v; want %d", len(first)+len(rest), err, len(data[0]))
	}
	// NB: a refused FUSE_NOTIFY_RESEND loses only the requests in flight
	// at the kill, which the readers may not have had: the log says it
	// every time.
	if log := m.log.String(); strings.Contains(log, "would not send again") {
		t.Fatalf("a successor's FUSE_NOTIFY_RESEND was refused:\n%s", tail([]byte(log), 4000))
	}
}

// TestUpgradeWithoutUnmount: SIGHUP makes the supervisor start a new
// serving process (a new binary, in an upgrade) without unmounting.
func TestUpgradeWithoutUnmount(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	paths, data := putFiles(t, m, 2, testBlock+3)
	r := startReaders(paths, data, 2)
	r.waitPasses(t, 2, time.Minute)
	old := m.servePID()
	m.cmd.Process.Signal(syscall.SIGHUP)
	if !m.out.wait("took the mount over", time.Minute, m.done) {
		t.Fatalf("no new serving process:\n%s", m.out)
	}
	r.waitPasses(t, 4, time.Minute)
	r.finish(t)
	if m.servePID() == old {
		t.Fatalf("the serving process is still %d", old)
	}
}

// TestMountKilledAndRestarted: the whole mount is killed (supervisor and
// serving process): its mount point is dead ("transport endpoint is not
// connected") until `strata mount` runs again there, which detaches the
// dead mount itself: no manual umount.
func TestMountKilledAndRestarted(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	if err := os.WriteFile(m.path("f"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.killAll()
	if _, err := os.Stat(m.path("f")); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("stat in a mount whose processes died: %v, want ENOTCONN", err)
	}
	m.out = newLines()
	m.start(srv.Addr, "default")
	if !m.out.wait("was a dead mount", time.Second, m.done) {
		t.Errorf("the second mount did not say it detached the dead one:\n%s", m.out)
	}
	if got, err := os.ReadFile(m.path("f")); err != nil || string(got) != "kept" {
		t.Fatalf("after the restart: %q, %v", got, err)
	}
}

// TestLeaderFailoverAndWorkerRestart: readers read through a mount of a
// group of three namespace service members while its leader is killed,
// and then while the only worker is killed and started again: no read
// fails (the client follows the leader; the mount waits for a worker).
func TestLeaderFailoverAndWorkerRestart(t *testing.T) {
	g := testcluster.StartGroup(t, 3)
	wdir := t.TempDir()
	w := testcluster.StartWorker(t, g.Meta(), wdir, "--cache-size", "256MiB")
	m := mount(t, g.Meta(), "default")
	paths, data := putFiles(t, m, 3, 2*testBlock+5)
	// Files no reader read yet: no short-circuit lease of theirs (which
	// the client keeps for 2 s and reads without the worker) is held.
	unread, unreadData := putFilesNamed(t, m, "u", 2, testBlock+7)
	r := startReaders(paths, data, 3)
	r.waitPasses(t, 3, time.Minute)
	leader, err := g.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	g.Kill(leader)
	r.waitPasses(t, 6, 2*time.Minute)
	r.finish(t)
	// The only worker is killed, and started again while a read waits.
	w.Kill()
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		testcluster.StartWorker(t, g.Meta(), wdir, "--cache-size", "256MiB")
	}()
	start := time.Now()
	for i, p := range unread {
		if got, err := readUncached(p); err != nil || !bytes.Equal(got, unreadData[i]) {
			t.Fatalf("a read while the worker restarts: %d bytes, %v", len(got), err)
		}
	}
	t.Logf("the reads while the worker restarted took %v", time.Since(start).Round(time.Millisecond))
	<-restarted
	if ok, _ := fusefs.IsMounted(m.Dir); !ok {
		t.Fatal("the mount went away")
	}
}
