// Package miniotest runs a real MinIO server for tests: a `minio server`
// process on a free loopback port with a temporary data directory, stopped
// when the test ends. Each NewStore gets a fresh bucket.
//
// The binary comes from $STRATA_MINIO or the project-local .cache/bin/minio
// that scripts/minio/install.sh builds. A missing binary fails the test; it
// never skips, since a test that silently does not run hides regressions.
//
// It is a test helper only, and not a mock: requests go over HTTP to MinIO.
package miniotest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/loopback"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/s3"
)

// Credentials of every test server (MinIO wants a password of 8+ characters).
const (
	AccessKey = "strata-test"
	SecretKey = "strata-test-secret"
)

const (
	readyTimeout = 60 * time.Second      // generous: the race detector and a busy CI machine
	pollEvery    = 25 * time.Millisecond // health-endpoint poll interval
	stopTimeout  = 10 * time.Second      // SIGTERM grace before SIGKILL
	startTries   = 3                     // a free port can be taken before MinIO binds it
)

// Server is a running MinIO.
type Server struct {
	Endpoint string // http://127.0.0.1:port

	cmd     *exec.Cmd
	data    string        // the data directory
	exited  chan struct{} // closed once the process is reaped
	out     *syncBuffer
	buckets atomic.Int64
}

// Binary returns the path of the MinIO binary, failing t with instructions
// if there is none.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv("STRATA_MINIO")
	if path == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("miniotest: %v; set STRATA_MINIO to a minio binary", err)
		}
		path = filepath.Join(root, ".cache", "bin", "minio")
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() {
		t.Fatalf("miniotest: no MinIO binary at %s: run scripts/minio/install.sh "+
			"(or set STRATA_MINIO to a minio binary)", path)
	}
	return path
}

// repoRoot finds the module root, the first directory upwards with a go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start runs a MinIO server until t's cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	var err error
	for range startTries {
		var srv *Server
		if srv, err = start(t, bin); err == nil {
			return srv
		}
	}
	t.Fatalf("miniotest: %v", err)
	return nil
}

func start(t testing.TB, bin string) (*Server, error) {
	addrs, err := loopback.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	addr, console := addrs[0], addrs[1]
	dir := t.TempDir()
	srv := &Server{Endpoint: "http://" + addr, data: filepath.Join(dir, "data"), exited: make(chan struct{}), out: &syncBuffer{}}
	srv.cmd = exec.Command(bin, "server", "--quiet", "--address", addr, "--console-address", console,
		"--certs-dir", filepath.Join(dir, "certs"), srv.data)
	srv.cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	srv.cmd.Stdout, srv.cmd.Stderr = srv.out, srv.out
	dieWithParent(srv.cmd)
	if err := srv.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = srv.cmd.Wait(); close(srv.exited) }()
	if err := srv.waitReady(); err != nil {
		srv.stop()
		return nil, fmt.Errorf("%w; output:\n%s", err, srv.out.String())
	}
	t.Cleanup(func() {
		srv.stop()
		if t.Failed() {
			t.Logf("minio output:\n%s", srv.out.String())
		}
	})
	return srv, nil
}

// waitReady polls the cluster health endpoint, giving up if the process
// exits or readyTimeout passes. NB: not the liveness one, which answers 200
// before MinIO's object layer, bucket metadata and IAM are up: a request
// then gets 503 XMinioServerNotInitialized (seen on a loaded machine).
func (s *Server) waitReady() error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if resp, err := client.Get(s.Endpoint + "/minio/health/cluster"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("minio exited during startup (%v)", s.cmd.ProcessState)
		case <-deadline.C:
			return fmt.Errorf("minio not live after %v", readyTimeout)
		case <-tick.C:
		}
	}
}

// stop terminates MinIO gracefully, then forcibly, and reaps it.
func (s *Server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // if paused
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Pause stops the server (SIGSTOP): it keeps its connections and queues
// what arrives, answering nothing, as a hung server does. Resume continues
// it.
func (s *Server) Pause(t testing.TB) { s.signal(t, syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("miniotest: %v: %v", sig, err)
	}
}

// Config returns the settings of a store on a new, empty bucket of s.
func (s *Server) Config(t testing.TB) s3.Config {
	t.Helper()
	cfg := s3.Config{
		Bucket:          fmt.Sprintf("strata-test-%d", s.buckets.Add(1)),
		Endpoint:        s.Endpoint,
		Region:          "us-east-1",
		AccessKeyID:     AccessKey,
		SecretAccessKey: SecretKey,
	}
	st, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("miniotest: %v", err)
	}
	if err := createBucket(st); err != nil {
		t.Fatalf("miniotest: creating bucket %s: %v", cfg.Bucket, err)
	}
	return cfg
}

// NewStore returns a store on a new, empty bucket of s.
func (s *Server) NewStore(t testing.TB) *s3.Store {
	t.Helper()
	st, err := s3.New(context.Background(), s.Config(t))
	if err != nil {
		t.Fatalf("miniotest: %v", err)
	}
	return st
}

// createBucket retries while MinIO, live but still initialising, answers
// 503; bounded by readyTimeout.
func createBucket(st *s3.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := st.CreateBucket(ctx)
		if err == nil || !object.IsRetryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// syncBuffer collects the server's output, written by exec's copier goroutine.
type syncBuffer struct {
	mu struct {
		sync.Mutex
		b strings.Builder
	}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.b.String()
}

// PendingUploads returns the multipart uploads of every bucket that were
// neither completed nor aborted, as "KEY-HASH/UPLOAD-ID". MinIO lists the
// uploads of one whole key only (s3.Store.ListUploads), so this reads its
// data directory instead, in the layout of the pinned version:
// .minio.sys/multipart/<hash of bucket and key>/<upload id>/.
func (s *Server) PendingUploads() ([]string, error) {
	keys, err := os.ReadDir(filepath.Join(s.data, ".minio.sys", "multipart"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		ups, err := os.ReadDir(filepath.Join(s.data, ".minio.sys", "multipart", k.Name()))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, u := range ups {
			if u.IsDir() {
				out = append(out, k.Name()+"/"+u.Name())
			}
		}
	}
	return out, nil
}
