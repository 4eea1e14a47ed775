package client_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// scCluster is a namespace service and one worker in the test's process:
// the client shares their host, so its cached reads are short-circuit.
type scCluster struct {
	w        *worker.Worker
	c        *client.Client
	cacheDir string
}

func startSC(t *testing.T) *scCluster {
	t.Helper()
	client.SetLeaseTTL(t, time.Minute) // outlives the slowest test run
	svc := testcluster.StartInProcess(t, nil)
	sc := &scCluster{cacheDir: t.TempDir()}
	sc.w = testcluster.ServeWorker(t, worker.Config{StateDir: t.TempDir(), Meta: svc.Addr,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: sc.cacheDir, Capacity: 256 << 20}}}})
	sc.c = testcluster.Client(t, svc.Addr, "")
	return sc
}

func (sc *scCluster) stats(t *testing.T) *pb.WorkerStats {
	t.Helper()
	st, err := sc.c.WorkerStats(context.Background())
	if err != nil || len(st) != 1 {
		t.Fatalf("worker stats: %v %v", st, err)
	}
	return st[0]
}

// write stores n random bytes at path in blocks of 4 MiB (four 1 MiB cache
// pages each) and returns them.
func (sc *scCluster) write(t *testing.T, path string, n int) []byte {
	t.Helper()
	data := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	w, err := sc.c.Create(context.Background(), path, client.CreateOptions{BlockSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

// open opens path for reading until the test ends.
func (sc *scCluster) open(t *testing.T, path string) *client.Reader {
	t.Helper()
	r, err := sc.c.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// readAll reads path in reads of odd sizes at odd offsets, so that whole
// and cut pages are both read by lease.
func (sc *scCluster) readAll(t *testing.T, path string, want []byte) {
	t.Helper()
	r, err := sc.c.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for off, n := 0, 3<<20+12345; off < len(want); off += n {
		buf := make([]byte, min(n, len(want)-off))
		if _, err := r.ReadAt(buf, int64(off)); err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if !bytes.Equal(buf, want[off:off+len(buf)]) {
			t.Fatalf("read at %d: wrong bytes", off)
		}
	}
}

// EndLeases ends every lease (and unmaps its file) at once; reads then go
// on by new ones.
func TestEndLeases(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 2*(4<<20)+777)
	sc.readAll(t, "/f", data)
	if n := client.MappedLeases(sc.c); n != 3 {
		t.Fatalf("%d mapped leases after the first read, want 3", n)
	}
	sc.c.EndLeases()
	if n := client.Leases(sc.c); n != 0 {
		t.Fatalf("%d leases after EndLeases, want 0", n)
	}
	sc.readAll(t, "/f", data)
	if n := client.Leases(sc.c); n != 3 {
		t.Fatalf("%d leases after reading again, want 3", n)
	}
}

// A page corrupted in the cache file while a client holds a lease on it is
// caught by the client's CRC check, never returned: the worker drops the
// page and fetches it again, and the read goes by a new lease.
func TestCorruptPageUnderLiveLease(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 2*(4<<20)+777)
	sc.readAll(t, "/f", data)
	if n, mapped := client.Leases(sc.c), client.MappedLeases(sc.c); n != 3 || mapped != n {
		t.Fatalf("%d leases after the first read (%d mapped), want one per block (3), all mapped", n, mapped)
	}
	before := sc.stats(t)
	if n := testcluster.CorruptCache(t, sc.cacheDir, 1<<20+5); n != 2 { // the second page of the two full blocks
		t.Fatalf("corrupted %d cache files, want 2", n)
	}
	sc.readAll(t, "/f", data)
	after := sc.stats(t)
	if got := after.Corruptions - before.Corruptions; got != 2 {
		t.Fatalf("the worker dropped %d corrupt pages, want 2", got)
	}
	// Each corrupt page found: one request that drops it, one new lease.
	if got := after.ShortCircuitOpens - before.ShortCircuitOpens; got != 4 {
		t.Fatalf("%d short-circuit requests, want 4", got)
	}
	if after.RpcBytesRead != before.RpcBytesRead {
		t.Fatalf("%d bytes went over RPC", after.RpcBytesRead-before.RpcBytesRead)
	}
	if after.BucketBytesRead == before.BucketBytesRead {
		t.Fatal("the corrupt pages were not fetched again")
	}
}

// One read of a whole block (several pages) with a corrupt page in its
// middle returns the block's bytes: the corrupt page is caught, dropped by
// the worker and fetched again, never returned.
func TestCorruptPageInLargeRead(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 4<<20)
	r := sc.open(t, "/f")
	buf := make([]byte, len(data))
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, data) {
		t.Fatalf("first read: %v", err)
	}
	if n := client.MappedLeases(sc.c); n != 1 {
		t.Fatalf("%d mapped leases after the first read, want 1", n)
	}
	before := sc.stats(t)
	if n := testcluster.CorruptCache(t, sc.cacheDir, 2<<20+(1<<19)+5); n != 1 { // the third of four pages
		t.Fatalf("corrupted %d cache files, want 1", n)
	}
	clear(buf)
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, data) {
		t.Fatalf("read over the corrupt page: %v (bytes equal: %v)", err, bytes.Equal(buf, data))
	}
	after := sc.stats(t)
	if got := after.Corruptions - before.Corruptions; got != 1 {
		t.Fatalf("the worker dropped %d corrupt pages, want 1", got)
	}
	if after.RpcBytesRead != before.RpcBytesRead || after.BucketBytesRead == before.BucketBytesRead {
		t.Fatalf("%d bytes over RPC (want 0), %d from the bucket (want the page)",
			after.RpcBytesRead-before.RpcBytesRead, after.BucketBytesRead-before.BucketBytesRead)
	}
}

// A small read checks the chunks (64 KiB) it touches, not its whole page:
// one beside a corrupt chunk of its page reads by the lease and drops
// nothing; one touching the corrupt chunk has the page dropped and fetched
// again, and returns the block's bytes.
func TestSmallReadChecksItsChunks(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 4<<20)
	sc.readAll(t, "/f", data)
	r := sc.open(t, "/f")
	before := sc.stats(t)
	if n := testcluster.CorruptCache(t, sc.cacheDir, 1<<20+5); n != 1 { // the second page's first chunk
		t.Fatalf("corrupted %d cache files, want 1", n)
	}
	buf := make([]byte, 4096)
	at := int64(1<<20 + 128<<10) // the same page's third chunk
	if _, err := r.ReadAt(buf, at); err != nil || !bytes.Equal(buf, data[at:at+4096]) {
		t.Fatalf("read beside the corrupt chunk: %v", err)
	}
	if after := sc.stats(t); after.Corruptions != before.Corruptions || after.ShortCircuitOpens != before.ShortCircuitOpens {
		t.Fatalf("a read beside the corrupt chunk dropped %d pages and took %d new leases, want none",
			after.Corruptions-before.Corruptions, after.ShortCircuitOpens-before.ShortCircuitOpens)
	}
	at = 1 << 20
	if _, err := r.ReadAt(buf, at); err != nil || !bytes.Equal(buf, data[at:at+4096]) {
		t.Fatalf("read of the corrupt chunk: %v", err)
	}
	if after := sc.stats(t); after.Corruptions-before.Corruptions != 1 || after.BucketBytesRead == before.BucketBytesRead {
		t.Fatalf("the corrupt chunk's page: %d dropped (want 1), %d bytes fetched again",
			after.Corruptions-before.Corruptions, after.BucketBytesRead-before.BucketBytesRead)
	}
}

// A random reader's lease covers the cached pages before its first read
// as well as after: reads of a block here and there take one lease, not
// one more at every read before the last lease's start.
func TestRandomReaderLeaseCoversTheBlock(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 4<<20)
	sc.readAll(t, "/f", data)
	sc.c.EndLeases()
	r := sc.open(t, "/f")
	before := sc.stats(t)
	buf := make([]byte, 4096)
	for _, at := range []int64{3<<20 + 8192, 2 << 20, 5, 1<<20 + 4096, 4<<20 - 4096} {
		if _, err := r.ReadAt(buf, at); err != nil || !bytes.Equal(buf, data[at:at+4096]) {
			t.Fatalf("read at %d: %v", at, err)
		}
	}
	if got := sc.stats(t).ShortCircuitOpens - before.ShortCircuitOpens; got != 1 {
		t.Fatalf("%d leases for random reads of one cached block, want 1", got)
	}
}

// A sequential reader (io.Reader, 1 MiB calls) of a file of several blocks
// has each next block's worker start fetching it before it gets there;
// the leases those requests bring serve the reads like any other.
func TestSequentialReadWarmsNextBlocks(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 3*(4<<20)+5)
	sc.w.DropCache()
	before := sc.stats(t)
	r := sc.open(t, "/f")
	var got bytes.Buffer
	if _, err := io.CopyBuffer(&got, struct{ io.Reader }{r}, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatal("wrong bytes")
	}
	if after := sc.stats(t); after.RpcBytesRead != before.RpcBytesRead {
		t.Fatalf("%d bytes went over RPC", after.RpcBytesRead-before.RpcBytesRead)
	}
}

// A lease on a block the cache let go (its file unlinked) ends at its next
// look at the file (here: the next read), and the worker serves the read by
// fetching the block again: a client never keeps reading a file the cache
// no longer accounts for.
func TestLeaseEndsWhenTheCacheDropsTheBlock(t *testing.T) {
	sc := startSC(t)
	client.SetLinkCheckEvery(t, 0)
	data := sc.write(t, "/f", 4<<20)
	sc.readAll(t, "/f", data)
	before := sc.stats(t)
	sc.w.DropCache()
	sc.readAll(t, "/f", data)
	after := sc.stats(t)
	if after.ShortCircuitOpens == before.ShortCircuitOpens || after.BucketBytesRead-before.BucketBytesRead < 4<<20 {
		t.Fatalf("the dropped block was read by the old lease: %d new leases, %d bytes fetched",
			after.ShortCircuitOpens-before.ShortCircuitOpens, after.BucketBytesRead-before.BucketBytesRead)
	}
}

// Readers racing for the leases of the same blocks all read by
// short-circuit: a lease one of them installs never takes away another's.
func TestConcurrentReadersShareLeases(t *testing.T) {
	sc := startSC(t)
	data := sc.write(t, "/f", 3*(4<<20))
	before := sc.stats(t)
	r, err := sc.c.Open(context.Background(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 50 {
				off := rng.IntN(len(data) - 1)
				buf := make([]byte, min(1+rng.IntN(2<<20), len(data)-off))
				if _, err := r.ReadAt(buf, int64(off)); err != nil || !bytes.Equal(buf, data[off:off+len(buf)]) {
					errs <- fmt.Errorf("read %d at %d: %v", len(buf), off, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if after := sc.stats(t); after.RpcBytesRead != before.RpcBytesRead {
		t.Fatalf("%d bytes went over RPC", after.RpcBytesRead-before.RpcBytesRead)
	}
}
