// Package testcluster starts Strata for tests: real `strata` processes on
// loopback (built once per test binary), or a namespace service in the test's
// own process when a test needs to reach inside. It is test support only.
package testcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/namespace"
)

var build struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of a strata binary built from this checkout, once
// per test process.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			build.err = err
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		dir, err := os.MkdirTemp("", "strata-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "strata")
		cmd := exec.Command("go", "build", "-o", build.path, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// Superuser is the OS user running the tests, the superuser of the
// services started here (as the NameNode's user is in HDFS).
func Superuser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// Process is a strata process under test.
type Process struct {
	Addr    string // the address it serves on
	DataDir string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	stderr  *lockedBuffer
	worker  bool
}

// StartDev starts `strata server --dev` on dataDir and waits until it serves.
func StartDev(t testing.TB, dataDir string, args ...string) *Process {
	return Start(t, dataDir, append([]string{"server", "--dev"}, args...)...)
}

// StartWorker starts `strata worker` for the namespace service at meta,
// with its state and cache in dir.
func StartWorker(t testing.TB, meta, dir string, args ...string) *Process {
	t.Helper()
	args = append([]string{"worker", "--meta", meta, "--state-dir", dir, "--listen", "127.0.0.1:0"}, args...)
	return run(t, dir, args, true)
}

// Start runs `strata <args> --data-dir dataDir --listen 127.0.0.1:0` and
// waits until it announces its address. The process is killed at cleanup.
func Start(t testing.TB, dataDir string, args ...string) *Process {
	t.Helper()
	return run(t, dataDir, append(args, "--data-dir", dataDir, "--listen", "127.0.0.1:0"), false)
}

func run(t testing.TB, dataDir string, args []string, worker bool) *Process {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	// NB: the process dies with the test binary even when a test panics
	// or times out before its cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{DataDir: dataDir, cmd: cmd, done: make(chan struct{}), stderr: &lockedBuffer{}, worker: worker}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go p.readStderr(pipe, addr)
	go func() { p.waitErr = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.Kill() })
	select {
	case a := <-addr:
		p.Addr = a
	case <-p.done:
		t.Fatalf("strata %v exited before serving: %v\n%s", args, p.waitErr, p.stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("strata %v did not start within 60s\n%s", args, p.stderr.String())
	}
	return p
}

// announced extracts the address from the line a process prints when it
// serves: "strata: serving on ADDR", or for a worker
// "strata: worker ID serving on ADDR".
func announced(line string, worker bool) (string, bool) {
	if !worker {
		return strings.CutPrefix(line, "strata: serving on ")
	}
	rest, ok := strings.CutPrefix(line, "strata: worker ")
	if !ok {
		return "", false
	}
	_, a, ok := strings.Cut(rest, " serving on ")
	return a, ok
}

func (p *Process) readStderr(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.stderr.add(line + "\n")
		if a, ok := announced(line, p.worker); ok {
			select {
			case addr <- a:
			default:
			}
		}
	}
}

// Kill sends SIGKILL and waits for the process to die.
func (p *Process) Kill() { p.signal(syscall.SIGKILL) }

// Stop sends SIGTERM and waits for a clean exit.
func (p *Process) Stop() { p.signal(syscall.SIGTERM) }

func (p *Process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	<-p.done
}

// Stderr returns what the process logged so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Client returns a client of p as user (the superuser if empty), closed at
// cleanup.
func Client(t testing.TB, addr, user string, groups ...string) *client.Client {
	t.Helper()
	if user == "" {
		user = Superuser()
	}
	c, err := client.New(client.Config{Meta: addr, User: user, Groups: groups})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// InProcess is a namespace service running inside the test process.
type InProcess struct {
	Server  *metaserver.Server
	Addr    string
	DataDir string // the "default" namespace's bucket is DataDir/bucket
}

// StartInProcess starts a namespace service with a "default" namespace in
// this process, on a temporary directory, serving gRPC on loopback. edit, if
// not nil, adjusts the configuration first.
func StartInProcess(t testing.TB, edit func(*metaserver.Config)) *InProcess {
	t.Helper()
	cfg := metaserver.Config{DataDir: t.TempDir(), Namespace: namespace.DefaultConfig(Superuser())}
	cfg.Store.BlockCacheBytes, cfg.Store.HotBytes = 8<<20, 8<<20
	if edit != nil {
		edit(&cfg)
	}
	srv, err := metaserver.Listen(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.ReadyWithDefault(context.Background(), "file://"+cfg.DataDir+"/bucket"); err != nil {
		t.Fatal(err)
	}
	return &InProcess{Server: srv.Server, Addr: srv.Addr, DataDir: cfg.DataDir}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
