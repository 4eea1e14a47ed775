package fusefs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// TestBadNames: names the service cannot hold get the errno a POSIX
// program expects, before anything is sent, and nothing is made.
func TestBadNames(t *testing.T) {
	srv := devServer(t)
	m := mount(t, srv.Addr, "default")
	long := strings.Repeat("n", 256)
	cases := []struct {
		name string
		want syscall.Errno
	}{
		{long, syscall.ENAMETOOLONG},
		{"bad\xff\xfeutf8", syscall.EILSEQ},
		{"a:b", syscall.EINVAL}, // HDFS's rule: no ':' in a name
	}
	for _, c := range cases {
		if err := os.WriteFile(m.path(c.name), []byte("x"), 0o644); !errors.Is(err, c.want) {
			t.Errorf("create %.20q: %v, want %v", c.name, err, c.want)
		}
		if err := os.Mkdir(m.path(c.name), 0o755); !errors.Is(err, c.want) {
			t.Errorf("mkdir %.20q: %v, want %v", c.name, err, c.want)
		}
	}
	ok := strings.Repeat("n", 255)
	if err := os.WriteFile(m.path(ok), []byte("x"), 0o644); err != nil {
		t.Errorf("a name of 255 bytes: %v", err)
	}
	if err := os.Rename(m.path(ok), m.path(long)); !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Errorf("rename to 256 bytes: %v, want ENAMETOOLONG", err)
	}
	if ents, _ := os.ReadDir(m.Dir); len(ents) != 1 {
		t.Errorf("the mount holds %v, want the one good name", names(ents))
	}
}

// TestQuota: creates past a directory's name quota, and a write past its
// space quota, fail with EDQUOT, as on a local file system with quotas;
// what fitted stays.
func TestQuota(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	for _, d := range []string{"names", "space"} {
		if err := os.Mkdir(m.path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(testcluster.Binary(t), "admin", "quota", "set", "--names", "3", "/names", "--meta", srv.Addr, "--plaintext")
	cmd.Env = append(os.Environ(), "STRATA_TOKEN="+testcluster.Token(t, srv.Addr, ""))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("admin quota set --names: %v\n%s", err, out)
	}
	cmd = exec.Command(testcluster.Binary(t), "admin", "quota", "set", "--space", "1MiB", "/space", "--meta", srv.Addr, "--plaintext")
	cmd.Env = append(os.Environ(), "STRATA_TOKEN="+testcluster.Token(t, srv.Addr, ""))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("admin quota set --space: %v\n%s", err, out)
	}
	for i, want := range []error{nil, nil, syscall.EDQUOT} { // the directory itself is one name
		err := os.WriteFile(m.path(fmt.Sprintf("names/f%d", i)), []byte("x"), 0o644)
		if !errors.Is(err, want) && !(want == nil && err == nil) {
			t.Errorf("file %d under a name quota of 3: %v, want %v", i, err, want)
		}
	}
	err := os.WriteFile(m.path("space/big"), make([]byte, 2<<20), 0o644)
	if !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("2 MiB under a space quota of 1 MiB: %v, want EDQUOT", err)
	}
}

// TestFullWorkerCache: a file larger than the worker's whole cache is
// written through the mount and read back whole: a worker whose cache is
// full takes writes all the same (the bucket holds the blocks, the cache
// evicts), so a POSIX program sees no error at all (docs/fuse.md, "Errors").
func TestFullWorkerCache(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB", "--worker-cache-size", "8MiB")
	m := mount(t, srv.Addr, "default")
	src := filepath.Join(t.TempDir(), "big")
	writeRandom(t, src, 5*testBlock+9, 11)
	run(t, m.Dir, "cp", src, m.path("big"))
	if got, want := sha256sumOf(t, m.path("big")), sha256Go(t, src); got != want {
		t.Errorf("a file of 5 blocks through a worker caching 2: sha256 %s, want %s", got, want)
	}
}

// TestStageLimit: random writes past the bytes the mount may stage on
// local disk (--stage-limit, its bound on a full disk) fail with ENOSPC;
// the writes before stand, and the rest of the file is as it was.
func TestStageLimit(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default", "--stage-limit", "1MiB")
	orig := bytes.Repeat([]byte("o"), 3<<20)
	if err := os.WriteFile(m.path("f"), orig, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(m.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("w"), 256<<10)
	want := append([]byte(nil), orig...)
	var werr error
	for off := int64(0); off < 2<<20 && werr == nil; off += int64(len(chunk)) {
		if _, werr = f.WriteAt(chunk, off); werr == nil {
			copy(want[off:], chunk)
		}
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Errorf("writes past the stage limit: %v, want ENOSPC", werr)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got, err := os.ReadFile(m.path("f")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after ENOSPC and close: %d bytes (%v), not the writes that succeeded over the original", len(got), err)
	}
}

// TestWorkerGone: a worker whose cache is full takes writes all the same
// (the bucket holds the file, the cache only copies), and a read whose
// worker is gone for good fails with EIO once the mount gave up waiting
// (--read-retry): never a short read that looks like the file's end.
func TestWorkerGone(t *testing.T) {
	g := testcluster.StartGroup(t, 1)
	w := testcluster.StartWorker(t, g.Meta(), t.TempDir(), "--cache-size", "8MiB")
	m := mount(t, g.Meta(), "default", "--read-retry", "1s")
	big := make([]byte, 40<<20)
	newPRNG(5).Read(big)
	if err := os.WriteFile(m.path("big"), big, 0o644); err != nil {
		t.Fatalf("a file five times the worker's cache: %v", err)
	}
	if got, err := os.ReadFile(m.path("big")); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	unread, _ := putFilesNamed(t, m, "u", 1, testBlock)
	w.Kill()
	_, err := readUncached(unread[0])
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("a read with no worker: %v, want EIO", err)
	}
}

// TestHungRequests: a request that the service does not answer is seen:
// the mount's log names it once it has run past --hung-after, and its
// metrics count it, until it ends.
func TestHungRequests(t *testing.T) {
	srv := devServer(t)
	addr := freeAddr(t)
	m := mount(t, srv.Addr, "default", "--hung-after", "300ms", "--metrics", addr, "--attr-timeout", "0", "--entry-timeout", "0")
	if err := os.WriteFile(m.path("f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	done := make(chan error, 1)
	go func() { _, err := os.Stat(m.path("f")); done <- err }()
	if !m.out.wait("a request hangs", time.Minute, m.done) {
		srv.Resume()
		t.Fatalf("no hung request in the log:\n%s", m.out)
	}
	metrics := get(t, "http://"+addr+"/metrics")
	srv.Resume()
	if !strings.Contains(metrics, "strata_mount_requests_hung 1") {
		t.Errorf("the metrics while it hung:\n%s", metrics)
	}
	if err := <-done; err != nil {
		t.Fatalf("the stat, once the service answered: %v", err)
	}
	if !m.out.wait("a hung request ended", time.Minute, m.done) {
		t.Errorf("the log does not say the hung request ended:\n%s", m.out)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(t *testing.T, url string) string {
	t.Helper()
	var resp *http.Response
	var err error
	for range 100 { // the serving process starts its metrics server after it mounted
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
