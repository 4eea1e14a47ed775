// Package testcluster starts Strata for tests: real `strata` processes on
// loopback (built once per test binary), or a namespace service in the test's
// own process when a test needs to reach inside. It is test support only.
package testcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/cputime"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/procgroup"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/token"
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
	proc    *procgroup.Process
	out     *output
}

// StartDev starts `strata server --dev` on dataDir and waits until it
// serves. Its admin token is in dataDir/token (Token finds it); it writes
// none to the home directory.
func StartDev(t testing.TB, dataDir string, args ...string) *Process {
	return Start(t, dataDir, append([]string{"server", "--dev", "--client-token-file="}, args...)...)
}

// StartWorker starts `strata worker` for the namespace service at meta,
// with its state and cache in dir, and the superuser's token in
// dir/token.
func StartWorker(t testing.TB, meta, dir string, args ...string) *Process {
	t.Helper()
	return StartWorkerWith(t, procgroup.StartProcess, meta, dir, args...)
}

// Launcher starts a process: procgroup.StartProcess, or on a host of its
// own (internal/testhosts' Host.Start).
type Launcher func(binary string, args []string, out io.Writer) (*procgroup.Process, error)

// StartWorkerWith starts a worker as StartWorker does, by launch; args
// may set --listen (the last one given counts).
func StartWorkerWith(t testing.TB, launch Launcher, meta, dir string, args ...string) *Process {
	t.Helper()
	tokenFile := filepath.Join(dir, "token")
	if err := token.WriteFile(tokenFile, Token(t, meta, "")); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"worker", "--meta", meta, "--state-dir", dir, "--listen", "127.0.0.1:0",
		"--token-file", tokenFile}, args...)
	return runWith(t, launch, dir, args, true)
}

// Start runs `strata <args> --data-dir dataDir --listen 127.0.0.1:0` and
// waits until it announces its address. The process is killed at cleanup.
// A dataDir that exists is made 0700 first, as an operator keeps one (the
// service refuses one open to others, and t.TempDir's are 0777 less the
// umask), unless args have --allow-shared-data-dir.
func Start(t testing.TB, dataDir string, args ...string) *Process {
	t.Helper()
	if !slices.Contains(args, "--allow-shared-data-dir") {
		if err := os.Chmod(dataDir, 0o700); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return run(t, dataDir, append(args, "--data-dir", dataDir, "--listen", "127.0.0.1:0"), false)
}

// NB: the processes serve in plaintext (--plaintext), as the clients of
// this package connect: TLS has tests of its own (cmd/strata tls_test.go).
func run(t testing.TB, dataDir string, args []string, worker bool) *Process {
	t.Helper()
	return runWith(t, procgroup.StartProcess, dataDir, args, worker)
}

func runWith(t testing.TB, launch Launcher, dataDir string, args []string, worker bool) *Process {
	t.Helper()
	args = append(args, "--plaintext")
	out := newOutput(worker)
	proc, err := launch(Binary(t), args, out)
	if err != nil {
		t.Fatal(err)
	}
	return serving(t, dataDir, proc, out)
}

// serving returns proc, killed at cleanup, once it announced its address
// in out.
func serving(t testing.TB, dataDir string, proc *procgroup.Process, out *output) *Process {
	t.Helper()
	worker := out.worker
	p := &Process{DataDir: dataDir, proc: proc, out: out}
	t.Cleanup(p.Kill)
	select {
	case a := <-out.addr:
		p.Addr = a
		if !worker {
			registerAdminDir(dataDir, a)
		}
	case <-proc.Done():
		t.Fatalf("%v exited before serving: %v\n%s", proc.Args(), proc.Wait(), out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%v did not start within 60s\n%s", proc.Args(), out.String())
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

// HTTP returns the address of the process's HTTP listener (metrics, the
// status page), as it announced it: "" if it has none, or had not said
// when it announced its gRPC address (a member announces it before).
func (p *Process) HTTP() string {
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	return p.out.mu.http
}

// CPU returns the CPU time the process has used so far (0 where the
// system cannot tell): what a benchmark's server spent, steadier than
// elapsed time on a busy machine.
func (p *Process) CPU() time.Duration { return cputime.Of(p.proc.Pid()) }

// Kill sends SIGKILL and waits for the process to die.
func (p *Process) Kill() { p.proc.Kill() }

// Stop sends SIGTERM and waits for a clean exit.
func (p *Process) Stop() { p.proc.Stop() }

// Pause stops the process until Resume: it answers nothing meanwhile.
func (p *Process) Pause() { p.proc.Pause() }

// Resume continues a paused process.
func (p *Process) Resume() { p.proc.Resume() }

// Stderr returns what the process logged so far (its stdout too).
func (p *Process) Stderr() string { return p.out.String() }

// Client returns a client of the service at addr as user (the superuser if
// empty) in groups, with a token Token issued, closed at cleanup.
func Client(t testing.TB, addr, user string, groups ...string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Meta: addr, Token: Token(t, addr, user, groups...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// InProcess is a namespace service running inside the test process.
type InProcess struct {
	Server  *metaserver.Server // its MetaService
	Member  *metaserver.Member // the member behind it: its jobs, its tokens
	Addr    string
	DataDir string              // the "default" namespace's bucket is DataDir/bucket
	Conns   *connlimit.Listener // its port's connections
}

// StartInProcess starts a namespace service with a "default" namespace in
// this process, on a temporary directory, serving gRPC on loopback. edit, if
// not nil, adjusts the configuration first.
func StartInProcess(t testing.TB, edit func(*metaserver.Config)) *InProcess {
	t.Helper()
	cfg := metaserver.Config{DataDir: t.TempDir(), Namespace: statemachine.DefaultConfig(Superuser())}
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
	if !cfg.NoAuth {
		tok, err := srv.IssueToken(context.Background(), Superuser(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		registerAdmin(tok, srv.Addr)
	}
	return &InProcess{Server: srv.Server, Member: srv.Member, Addr: srv.Addr, DataDir: cfg.DataDir, Conns: srv.Conns}
}

// output keeps what a process writes and sends the address it announces
// (the first) on addr.
type output struct {
	worker bool
	addr   chan string
	mu     struct {
		sync.Mutex
		all  strings.Builder
		line []byte // the line being written
		http string // the HTTP listener's address it announced
	}
}

func newOutput(worker bool) *output { return &output{worker: worker, addr: make(chan string, 1)} }

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mu.all.Write(b)
	o.mu.line = append(o.mu.line, b...)
	for {
		line, rest, ok := bytes.Cut(o.mu.line, []byte("\n"))
		if !ok {
			break
		}
		if a, ok := strings.CutPrefix(string(line), "strata: http on "); ok {
			o.mu.http, _, _ = strings.Cut(a, " ")
		}
		if a, ok := announced(string(line), o.worker); ok {
			select {
			case o.addr <- a:
			default:
			}
		}
		o.mu.line = rest
	}
	return len(b), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.all.String()
}
