package worker_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/s3"
	"github.com/stratafs/strata/internal/object/s3/miniotest"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// testBlockSize, asked for by the tests' writers, keeps files of a few MiB
// many blocks long.
const testBlockSize = 4 << 20

// minioCluster is a namespace service and two workers, all real processes,
// storing blocks in a real MinIO bucket.
type minioCluster struct {
	meta    *testcluster.Process
	workers []*testcluster.Process
	ns      string
	bucket  object.Store // the namespace's bucket, seen directly
	minio   *miniotest.Server
}

// startMinioCluster starts the cluster, each worker with workerArgs too.
func startMinioCluster(t *testing.T, workerArgs ...string) *minioCluster {
	t.Helper()
	minio := miniotest.Start(t)
	cfg := minio.Config(t)
	cfg.Prefix = "strata"
	bucket, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", cfg.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", cfg.SecretAccessKey)
	meta := testcluster.Start(t, t.TempDir(), "meta")
	c := &minioCluster{meta: meta, ns: "lake", bucket: bucket, minio: minio}
	for range 2 {
		args := append([]string{"--cache-size", "256MiB"}, workerArgs...)
		c.workers = append(c.workers, testcluster.StartWorker(t, meta.Addr, t.TempDir(), args...))
	}
	admin := testcluster.Client(t, meta.Addr, "")
	uri := fmt.Sprintf("s3://%s/strata?endpoint=%s&region=%s", cfg.Bucket, url.QueryEscape(cfg.Endpoint), cfg.Region)
	if err := admin.CreateNamespace(context.Background(), &pb.NamespaceInfo{Name: c.ns,
		Mode: pb.NamespaceMode_NAMESPACE_MODE_BLOCK, StoreUri: uri}); err != nil {
		t.Fatal(err)
	}
	waitWorkers(t, admin, 2)
	return c
}

// waitWorkers polls until n workers have registered.
func waitWorkers(t *testing.T, c *client.Client, n int) {
	t.Helper()
	for range 1000 {
		if st, err := c.WorkerStats(context.Background()); err == nil && len(st) >= n {
			return
		}
		pollPause()
	}
	t.Fatalf("fewer than %d workers registered", n)
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n - n%8; i < n; i++ {
		b[i] = byte(rng.Uint64())
	}
	return b
}

func writeFile(t *testing.T, c *client.Client, path string, data []byte) {
	t.Helper()
	w, err := c.Create(context.Background(), path, client.CreateOptions{Overwrite: true, BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	// Odd-sized writes cross chunk and block boundaries at odd places.
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1<<20+4097)
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatalf("write %s: %v", path, err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", path, err)
	}
}

func TestWriteAndReadBackAcrossSizes(t *testing.T) {
	mc := startMinioCluster(t)
	c := testcluster.Client(t, mc.meta.Addr, "")
	sizes := []int{0, 1, 4096, 4097, testBlockSize + 1, 3*testBlockSize + 12345}
	for i, size := range sizes {
		path := fmt.Sprintf("strata://%s/sizes/f%d", mc.ns, size)
		data := randomBytes(uint64(i), size)
		writeFile(t, c, path, data)
		got, err := c.ReadFile(context.Background(), path)
		if err != nil {
			t.Fatalf("read %d-byte file: %v", size, err)
		}
		if sha256.Sum256(got) != sha256.Sum256(data) {
			t.Fatalf("%d-byte file came back different (%d bytes)", size, len(got))
		}
		st, err := c.Stat(context.Background(), path)
		if err != nil || st.Length != uint64(size) {
			t.Fatalf("stat %d-byte file: %+v %v", size, st, err)
		}
	}
	// Inline files take no object; the others one per block: 1 + 2 + 4.
	if n := countBucket(t, mc); n != 7 {
		t.Fatalf("%d objects in the bucket, want 7", n)
	}
	checkRandomRanges(t, c, fmt.Sprintf("strata://%s/sizes/f%d", mc.ns, sizes[len(sizes)-1]), randomBytes(uint64(len(sizes)-1), sizes[len(sizes)-1]))
	checkStorageClassRefused(t, c, mc.ns)
}

// TestOneGiB writes and reads back a 1 GiB file of random content.
func TestOneGiB(t *testing.T) {
	if testing.Short() {
		t.Log("-short: 1 GiB file shrunk to 64 MiB")
	}
	size := 1 << 30
	if testing.Short() {
		size = 64 << 20
	}
	mc := startMinioCluster(t)
	c := testcluster.Client(t, mc.meta.Addr, "")
	path := fmt.Sprintf("strata://%s/big", mc.ns)
	want := sha256.New()
	w, err := c.Create(context.Background(), path, client.CreateOptions{BlockSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	chunk := 8 << 20
	for off := 0; off < size; off += chunk {
		data := randomBytes(uint64(off), chunk)
		want.Write(data)
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := c.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	if n, err := io.Copy(got, r); err != nil || n != int64(size) {
		t.Fatalf("read back %d bytes: %v", n, err)
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatal("1 GiB file came back different")
	}
}

// checkRandomRanges compares random ranged reads with the local copy.
func checkRandomRanges(t *testing.T, c *client.Client, path string, data []byte) {
	t.Helper()
	r, err := c.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		off := rng.IntN(len(data))
		n := min(1+rng.IntN(2<<20), len(data)-off)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, int64(off)); err != nil {
			t.Fatalf("ReadAt(%d, %d): %v", off, n, err)
		}
		if !bytes.Equal(buf, data[off:off+n]) {
			t.Fatalf("ReadAt(%d, %d) differs", off, n)
		}
	}
	if _, err := r.ReadAt(make([]byte, 10), int64(len(data))); !errors.Is(err, io.EOF) {
		t.Fatalf("read at the end: %v", err)
	}
}

// A worker killed while a client streams a file to it: the writer gets a
// clear error, no partial file is left, and the blocks it had uploaded are
// collected.
func TestWorkerKilledDuringWrite(t *testing.T) {
	mc := startMinioCluster(t)
	c := testcluster.Client(t, mc.meta.Addr, "")
	path := fmt.Sprintf("strata://%s/killed-write", mc.ns)
	w, err := c.Create(context.Background(), path, client.CreateOptions{BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(1, 3*testBlockSize)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	for _, wk := range mc.workers {
		wk.Kill()
	}
	var werr error
	for i := 0; i < 64 && werr == nil; i++ {
		_, werr = w.Write(data[:1<<20])
	}
	if werr == nil {
		werr = w.Close()
	} else {
		w.Close()
	}
	if !errors.Is(werr, fserr.ErrUnavailable) {
		t.Fatalf("writer's error: %v, want unavailable", werr)
	}
	if _, err := c.Stat(context.Background(), path); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("after a failed write the file is still there: %v", err)
	}
	// What the worker had uploaded is collected once the deletion commits.
	for i := 0; countBucket(t, mc) > 0; i++ {
		if i == 1000 {
			t.Fatalf("%d orphaned objects remain in the bucket", countBucket(t, mc))
		}
		pollPause()
	}
}

// countBucket counts the objects in the cluster's bucket.
func countBucket(t *testing.T, mc *minioCluster) int {
	t.Helper()
	list, err := mc.bucket.List(context.Background(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// A worker killed during a read: the reader carries on through the other
// worker.
func TestWorkerKilledDuringRead(t *testing.T) {
	mc := startMinioCluster(t)
	c := testcluster.Client(t, mc.meta.Addr, "")
	path := fmt.Sprintf("strata://%s/killed-read", mc.ns)
	data := randomBytes(2, 16*testBlockSize) // 16 blocks: both workers are home to some
	writeFile(t, c, path, data)
	r, err := c.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	half := make([]byte, len(data)/2)
	if _, err := io.ReadFull(r, half); err != nil {
		t.Fatal(err)
	}
	mc.workers[0].Kill()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read after a worker died: %v", err)
	}
	if !bytes.Equal(append(half, rest...), data) {
		t.Fatal("data differs after failover")
	}
}
