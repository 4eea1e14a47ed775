package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/objstore"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// pollPause spaces the polls of a condition another process makes true.
func pollPause() { time.Sleep(10 * time.Millisecond) }

// local is a namespace service and one worker in the test's process, so
// that tests can wrap the bucket with faults and look into the cache.
type local struct {
	svc      *testcluster.InProcess
	w        *worker.Worker
	cacheDir string
	bucket   string
	logs     *syncBuffer // what the worker logged
}

// syncBuffer is a bytes.Buffer safe for the worker's concurrent logging.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startLocal(t testing.TB, capacity int64, wrap func(object.Store) object.Store) *local {
	return startLocalWith(t, capacity, wrap, nil)
}

// startLocalWith is startLocal with edit, if not nil, changing the worker's
// configuration and the retry policy of its bucket.
func startLocalWith(t testing.TB, capacity int64, wrap func(object.Store) object.Store, edit func(*worker.Config, *retry.Policy)) *local {
	t.Helper()
	l := &local{svc: testcluster.StartInProcess(t, nil), cacheDir: t.TempDir(), logs: &syncBuffer{}}
	l.bucket = filepath.Join(l.svc.DataDir, "bucket")
	cfg := worker.Config{StateDir: t.TempDir(), Meta: l.svc.Addr,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: l.cacheDir, Capacity: capacity}}},
		Log:   slog.New(slog.NewTextHandler(l.logs, nil))}
	p := retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond,
		AttemptTimeout: 2 * time.Second, MaxAttempts: 20}
	if edit != nil {
		edit(&cfg, &p)
	}
	cfg.OpenStore = func(ctx context.Context, uri string) (object.Store, error) {
		st, err := objstore.Open(ctx, uri)
		if err != nil {
			return nil, err
		}
		if wrap != nil {
			st = wrap(st)
		}
		return retry.New(st, p), nil
	}
	l.w = testcluster.ServeWorker(t, cfg)
	return l
}

func stats(t *testing.T, c *client.Client) *pb.WorkerStats {
	t.Helper()
	st, err := c.WorkerStats(context.Background())
	if err != nil || len(st) != 1 {
		t.Fatalf("worker stats: %v %v", st, err)
	}
	return st[0]
}

// A cached read on the same host moves no byte over the worker's RPC.
func TestCachedReadIsShortCircuit(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(3, 2*testBlockSize+100)
	writeFile(t, c, "/sc", data)
	before := stats(t, c)
	for range 2 {
		got, err := c.ReadFile(context.Background(), "/sc")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read: %v", err)
		}
	}
	after := stats(t, c)
	if after.RpcBytesRead != before.RpcBytesRead {
		t.Fatalf("%d bytes went over RPC", after.RpcBytesRead-before.RpcBytesRead)
	}
	// NB: the second read goes by the leases the first one got: the worker
	// lends each block once, and sees no request for it within the TTL.
	if after.ShortCircuitBytes-before.ShortCircuitBytes < uint64(len(data)) {
		t.Fatalf("short-circuit lent %d bytes, want %d", after.ShortCircuitBytes-before.ShortCircuitBytes, len(data))
	}
	// The same read with short-circuit off goes over RPC.
	rpc, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.AdminToken(t, l.svc.Addr), NoShortCircuit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	if got, err := rpc.ReadFile(context.Background(), "/sc"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("RPC read: %v", err)
	}
	if st := stats(t, c); st.RpcBytesRead-after.RpcBytesRead != uint64(len(data)) {
		t.Fatalf("RPC read moved %d bytes, want %d", st.RpcBytesRead-after.RpcBytesRead, len(data))
	}
}

// A storm of 503s, timeouts and short reads from the bucket is survived by
// the retry layer, for writes and cold reads alike.
func TestBucketFaultStorm(t *testing.T) {
	inj := faulty.NewInjector(42)
	l := startLocal(t, 256<<20, func(s object.Store) object.Store { return faulty.New(s, inj) })
	c := testcluster.Client(t, l.svc.Addr, "")
	inj.Set(faulty.Mix(0.3)...)
	data := randomBytes(4, 3*testBlockSize+7)
	writeFile(t, c, "/storm", data)
	evictAll(t, l)
	got, err := c.ReadFile(context.Background(), "/storm")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read through the storm: %v", err)
	}
	if inj.Fired() == 0 {
		t.Fatal("no fault fired")
	}
}

// evictAll empties the worker's cache by dropping every cached block.
func evictAll(t *testing.T, l *local) {
	t.Helper()
	l.w.DropCache()
}

// A corrupted cache file is detected and refetched, never returned.
func TestCorruptCacheIsRefetched(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(5, testBlockSize)
	writeFile(t, c, "/corrupt", data)
	if n := testcluster.CorruptCache(t, l.cacheDir, 1000); n == 0 {
		t.Fatal("no cache file to corrupt")
	}
	for _, noSC := range []bool{false, true} {
		cl, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.AdminToken(t, l.svc.Addr), NoShortCircuit: noSC})
		if err != nil {
			t.Fatal(err)
		}
		got, err := cl.ReadFile(context.Background(), "/corrupt")
		cl.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("short-circuit off=%v: read %v", noSC, err)
		}
	}
	if stats(t, c).Corruptions == 0 {
		t.Fatal("the worker counted no corruption")
	}
	if logs := l.logs.String(); !strings.Contains(logs, "corrupt page") {
		t.Fatalf("the worker logged no corrupt page:\n%s", logs)
	}
}

// Cold reads count as misses, short-circuit ones too, and warm reads as
// hits.
func TestColdReadsCountMisses(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(6, 2*testBlockSize)
	writeFile(t, c, "/cold", data)
	for _, noSC := range []bool{false, true} {
		evictAll(t, l)
		cl, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.AdminToken(t, l.svc.Addr), NoShortCircuit: noSC})
		if err != nil {
			t.Fatal(err)
		}
		before := stats(t, c)
		got, err := cl.ReadFile(context.Background(), "/cold")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("short-circuit off=%v: cold read: %v", noSC, err)
		}
		cold := stats(t, c)
		if cold.Misses == before.Misses {
			t.Fatalf("short-circuit off=%v: a cold read counted no miss (hits %d -> %d)", noSC, before.Hits, cold.Hits)
		}
		cl.EndLeases()
		got, err = cl.ReadFile(context.Background(), "/cold")
		cl.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("short-circuit off=%v: warm read: %v", noSC, err)
		}
		if warm := stats(t, c); warm.Hits == cold.Hits || warm.Misses != cold.Misses {
			t.Fatalf("short-circuit off=%v: a warm read: hits %d -> %d, misses %d -> %d", noSC, cold.Hits, warm.Hits, cold.Misses, warm.Misses)
		}
	}
}

// A bucket that keeps failing after the retries is a temporary condition
// for the client, with the bucket's error as the cause.
func TestBucketUnavailableIsUnavailable(t *testing.T) {
	inj := faulty.NewInjector(7)
	l := startLocal(t, 256<<20, func(s object.Store) object.Store { return faulty.New(s, inj) })
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(8, testBlockSize)
	writeFile(t, c, "/down", data)
	evictAll(t, l)
	inj.Set(faulty.Rule{Kind: faulty.Error, Err: fmt.Errorf("%w: 503 the bucket is down for the test", object.ErrTransient)})
	_, err := c.ReadFile(context.Background(), "/down")
	if !errors.Is(err, fserr.ErrUnavailable) || !strings.Contains(err.Error(), "the bucket is down for the test") {
		t.Fatalf("read from a bucket that is down: %v, want unavailable with the cause", err)
	}
	w, err := c.Create(context.Background(), "/down2", client.CreateOptions{BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Close()
	}
	if !errors.Is(err, fserr.ErrUnavailable) || !strings.Contains(err.Error(), "the bucket is down for the test") {
		t.Fatalf("write to a bucket that is down: %v, want unavailable with the cause", err)
	}
}

// A cache smaller than the data evicts instead of failing.
func TestFullCacheEvicts(t *testing.T) {
	l := startLocal(t, 2*testBlockSize, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	var files [][]byte
	for i := range 4 {
		data := randomBytes(uint64(10+i), 2*testBlockSize)
		writeFile(t, c, fmt.Sprintf("/full/%d", i), data)
		files = append(files, data)
	}
	for i, data := range files {
		got, err := c.ReadFile(context.Background(), fmt.Sprintf("/full/%d", i))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("file %d: %v", i, err)
		}
	}
	st := stats(t, c)
	if st.Evictions == 0 || st.Used > st.Capacity {
		t.Fatalf("no eviction, or over capacity: %+v", st)
	}
}

// Blocks of a deleted file leave the bucket once the deletion commits.
func TestDeletedFilesBlocksAreCollected(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	writeFile(t, c, "/gc/a", randomBytes(6, 2*testBlockSize+1))
	writeFile(t, c, "/gc/b", randomBytes(7, testBlockSize+1))
	if n := countObjects(t, l.bucket); n != 5 {
		t.Fatalf("%d objects in the bucket, want 5", n)
	}
	if _, err := c.Delete(context.Background(), "/gc/a", false); err != nil {
		t.Fatal(err)
	}
	if err := l.svc.Member.RunJob(context.Background(), metaserver.JobGarbage); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, l.bucket); n != 2 {
		t.Fatalf("%d objects in the bucket after deleting a, want 2", n)
	}
	// Overwriting b frees its old blocks too.
	writeFile(t, c, "/gc/b", randomBytes(8, 10))
	if err := l.svc.Member.RunJob(context.Background(), metaserver.JobGarbage); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, l.bucket); n != 0 {
		t.Fatalf("%d objects left, want 0", n)
	}
	if _, err := c.ReadFile(context.Background(), "/gc/b"); err != nil {
		t.Fatal(err)
	}
}

func countObjects(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(filepath.Join(dir, "blocks"), func(path string, info os.FileInfo, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err == nil && !info.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
