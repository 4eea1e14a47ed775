package fusefs_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/fusefs"
	"github.com/stratafs/strata/internal/testcluster"
)

// needFUSE fails a test on a machine that cannot mount: the project's
// scripts install what it needs (scripts/deps/install.sh: fuse3), so a
// machine without it is set up wrong, not a reason to skip.
func needFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("no /dev/fuse: %v (the mount's tests need the fuse module; make deps installs fuse3)", err)
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Fatal("no fusermount3 for a mount by a user other than root: make deps installs fuse3")
		}
	}
}

// devServer starts `strata server --dev` (a worker in the same process,
// block mode) and returns its address.
func devServer(t *testing.T, args ...string) *testcluster.Process {
	t.Helper()
	return testcluster.StartDev(t, t.TempDir(), append([]string{"--trash-interval", "0"}, args...)...)
}

// mountProc is a running `strata mount`: its supervisor, its output.
type mountProc struct {
	t     *testing.T
	Dir   string // the mount point
	conn  uint32 // the kernel's id of its FUSE connection
	State string
	cmd   *exec.Cmd
	out   *lines
	log   *lines // all its output, across takeovers (out is replaced)
	done  chan struct{}
}

// mount mounts namespace ns of the service at addr on a new directory
// with `strata mount`, as the superuser (its token in the environment)
// unless args say otherwise, and returns once it is mounted.
func mount(t *testing.T, addr, ns string, args ...string) *mountProc {
	t.Helper()
	needFUSE(t)
	m := &mountProc{t: t, Dir: t.TempDir(), State: t.TempDir(), out: newLines(), done: make(chan struct{})}
	m.start(addr, ns, args...)
	return m
}

func (m *mountProc) start(addr, ns string, args ...string) {
	t := m.t
	t.Helper()
	all := append([]string{"mount", ns, m.Dir, "--meta", addr, "--plaintext", "--state-dir", m.State}, args...)
	m.cmd = exec.Command(testcluster.Binary(t), all...)
	m.cmd.Env = os.Environ()
	if !slices.Contains(args, "--insecure-callers") { // a service without authentication has no tokens
		m.cmd.Env = append(m.cmd.Env, "STRATA_TOKEN="+testcluster.Token(t, addr, ""))
	}
	m.log = m.out
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	m.done = make(chan struct{})
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		m.stop()
		if t.Failed() {
			t.Logf("strata mount %s's output:\n%s", m.Dir, tail([]byte(m.log.String()), 30000))
		}
	})
	if !m.out.wait("strata: mounted", time.Minute, m.done) {
		t.Fatalf("strata mount did not mount:\n%s", m.out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(m.Dir, &st); err != nil {
		t.Fatal(err)
	}
	m.conn = unix.Minor(st.Dev)
}

// stop unmounts (detaching a mount still in use) and waits for the
// mount's process to end. A mount that a failed test left with requests
// nobody answers is aborted, so that the test's own threads blocked in it
// end too: through fusectl where it is mounted, and in any case by killing
// the supervisor and its serving process, the last holders of the
// connection (closing it aborts it; the serving process also holds the
// output's pipe, which m.done waits for).
func (m *mountProc) stop() {
	if ok, _ := fusefs.IsMounted(m.Dir); ok {
		if err := fusefs.Unmount(m.Dir, false); err != nil {
			_ = fusefs.Unmount(m.Dir, true)
		}
	}
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		_ = os.WriteFile(fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", m.conn), []byte("1"), 0)
		m.cmd.Process.Kill()
		if b, err := os.ReadFile(filepath.Join(m.State, "serve.pid")); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		<-m.done
	}
}

// path returns rel's path in the mount.
func (m *mountProc) path(rel string) string { return filepath.Join(m.Dir, rel) }

// servePID returns the pid of the serving process the supervisor runs.
func (m *mountProc) servePID() int {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join(m.State, "serve.pid"))
	if err != nil {
		m.t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		m.t.Fatal(err)
	}
	return pid
}

// killAll kills the supervisor and its serving process (SIGKILL), as a
// crash of the whole mount would.
func (m *mountProc) killAll() {
	pid := m.servePID()
	m.cmd.Process.Kill()
	syscall.Kill(pid, syscall.SIGKILL)
	<-m.done // NB: once both are gone: the serving process holds the output's pipe too
}

// lines is a process's output, which a test can wait on.
type lines struct {
	mu   sync.Mutex
	all  strings.Builder
	more chan struct{} // closed and replaced at every write
	next *lines        // also gets every write
}

func newLines() *lines { return &lines{more: make(chan struct{})} }

// newLinesFrom is a fresh output that old's writer writes to from now on
// (old's writer is a process's: it goes on writing to old, which passes
// every write on).
func newLinesFrom(old *lines) *lines {
	l := newLines()
	old.mu.Lock()
	old.next = l
	old.mu.Unlock()
	return l
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(b)
	close(l.more)
	l.more = make(chan struct{})
	if l.next != nil {
		l.next.Write(b)
	}
	return len(b), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.String()
}

// wait waits until the output holds s, for up to d or until done closes.
func (l *lines) wait(s string, d time.Duration, done <-chan struct{}) bool {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		found, more := strings.Contains(l.all.String(), s), l.more
		l.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-more:
		case <-done:
			return strings.Contains(l.String(), s)
		case <-deadline:
			return false
		}
	}
}

// run runs a command in dir and fails the test with its output if it
// fails.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeRandom writes n pseudo-random bytes (seeded) to path.
func writeRandom(t *testing.T, path string, n int64, seed int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, io.LimitReader(newPRNG(seed), n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// prng is a fast deterministic byte stream (xorshift), so that big test
// files cost no entropy and are the same at every run.
type prng struct{ s uint64 }

func newPRNG(seed int64) *prng { return &prng{s: uint64(seed)*2654435761 + 1} }

func (p *prng) Read(b []byte) (int, error) {
	for i := 0; i < len(b); i += 8 {
		p.s ^= p.s << 13
		p.s ^= p.s >> 7
		p.s ^= p.s << 17
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(p.s >> (8 * j))
		}
	}
	return len(b), nil
}
