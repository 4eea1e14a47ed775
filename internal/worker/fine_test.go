package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/mem"
	"github.com/stratafs/strata/internal/object/retry"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// gatedStore is a bucket whose Gets it counts, and whose bodies can be
// held: a body delivers its bytes up to the object's offset gate (if
// set) and then waits, until open is closed or the request's context
// ends (a stalled bucket: the retry layer's stall timeout ends it).
type gatedStore struct {
	object.Store
	gets  atomic.Int64
	bytes atomic.Int64
	gate  int64         // object offset bodies stop at; 0: none
	open  chan struct{} // closed: bodies go on past gate
}

func (s *gatedStore) GetVersion(ctx context.Context, key, etag string, off, length int64) (object.Reader, error) {
	r, err := s.Store.GetVersion(ctx, key, etag, off, length)
	return s.wrap(ctx, r, off, err)
}

func (s *gatedStore) Get(ctx context.Context, key string, off, length int64) (object.Reader, error) {
	r, err := s.Store.Get(ctx, key, off, length)
	return s.wrap(ctx, r, off, err)
}

func (s *gatedStore) wrap(ctx context.Context, r object.Reader, off int64, err error) (object.Reader, error) {
	if err != nil {
		return nil, err
	}
	s.gets.Add(1)
	return &gatedReader{Reader: r, s: s, ctx: ctx, pos: off}, nil
}

type gatedReader struct {
	object.Reader
	s   *gatedStore
	ctx context.Context
	pos int64
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if g := r.s.gate; g > 0 {
		if r.pos >= g {
			select {
			case <-r.s.open:
			case <-r.ctx.Done():
				return 0, r.ctx.Err()
			}
		} else if int64(len(p)) > g-r.pos {
			p = p[:g-r.pos]
		}
	}
	n, err := r.Reader.Read(p)
	r.pos += int64(n)
	r.s.bytes.Add(int64(n))
	return n, err
}

// fineWorker is a worker over store (behind the retry layer with p, if
// p is not nil) holding block 1/2 of size bytes, with no idle fill.
func fineWorker(t *testing.T, store *gatedStore, size int, p *retry.Policy) (*Worker, *pb.BlockRef, []byte) {
	return fineWorkerOf(t, store, size, p, "")
}

// fineWorkerOf is fineWorker with the block the whole of the object named
// name (a cache-mode namespace's), if not empty.
func fineWorkerOf(t *testing.T, store *gatedStore, size int, p *retry.Policy, name string) (*Worker, *pb.BlockRef, []byte) {
	t.Helper()
	data := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{42}).Read(data)
	key := blocks.ObjectKey(1, 2)
	if name != "" {
		key = name
	}
	info, err := store.Store.Put(context.Background(), key, bytes.NewReader(data), int64(size))
	if err != nil {
		t.Fatal(err)
	}
	var st object.Store = store
	if p != nil {
		st = retry.New(store, *p)
	}
	w, err := New(Config{StateDir: t.TempDir(), Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 64 << 20}}},
		OpenStore: func(context.Context, string) (object.Store, error) { return st, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	trustTest(w, map[string]string{"default": "mem://"})
	ref := &pb.BlockRef{StoreUri: "mem://", InodeId: 1, BlockId: 2, Length: uint64(size),
		BlockToken: testToken(blocktoken.Read, "default", 1, name)}
	if name != "" {
		ref.ObjectKey, ref.Version = name, info.ETag
	}
	return w, ref, data
}

// TestColdRandomReadsFetchTheirRanges: cold random reads of scattered
// ranges of about 0.3 MB (a Parquet reader's column chunks) take from the
// bucket their own bytes rounded to the cache's fine pages (16 KiB), not
// the 1 MiB pages around them (up to three times as much before issue 42),
// and the cache holds exactly that afterwards: a second read of the same
// ranges fetches nothing, a range beside them is still missing. In block
// mode and in cache mode (a block of an object of the bucket).
func TestColdRandomReadsFetchTheirRanges(t *testing.T) {
	for _, object := range []string{"", "lake/t.parquet"} {
		t.Run("object="+object, func(t *testing.T) { testColdRandomReads(t, object) })
	}
}

func testColdRandomReads(t *testing.T, object string) {
	store := &gatedStore{Store: mem.New()}
	w, ref, data := fineWorkerOf(t, store, 8<<20, nil, object)
	ranges := [][2]int64{{100_000, 310_000}, {3_000_123, 290_000}, {7_200_000, 330_000}}
	var asked int64
	for round := range 2 {
		for _, r := range ranges {
			s := &sink{ctx: context.Background()}
			if err := w.Read(&pb.ReadRequest{Block: ref, Offset: uint64(r[0]), Length: uint64(r[1]), Random: true}, s); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.got.Bytes(), data[r[0]:r[0]+r[1]]) {
				t.Fatalf("read %v: wrong bytes", r)
			}
			if round == 0 {
				asked += r[1]
			}
		}
		if round == 0 {
			if got := store.bytes.Load(); float64(got) > 1.1*float64(asked) {
				t.Fatalf("cold: %d bytes from the bucket for %d asked (%.2fx), want at most 1.1x", got, asked, float64(got)/float64(asked))
			}
			t.Logf("cold: %d bytes from the bucket for %d asked (%.3fx)", store.bytes.Load(), asked, float64(store.bytes.Load())/float64(asked))
		}
	}
	if got := store.bytes.Load(); float64(got) > 1.1*float64(asked) {
		t.Fatalf("warm again: %d bytes from the bucket in all, want no more than cold", got)
	}
	key := blocks.CacheKey(1, 2)
	if m := w.cache.Missing(key, 1<<20, 1<<20); len(m) == 0 {
		t.Fatal("a range nobody read is cached")
	}
	if st := w.cache.Stats(); st.Used > int64(float64(asked)*1.1) {
		t.Fatalf("the cache holds %d bytes for %d read", st.Used, asked)
	}
}

// TestTwoColdReadersOneFetch: two readers of the same cold range share one
// GET, and the first reader has its first bytes before the GET ends (the
// worker streams them as they arrive, not once the range is cached).
func TestTwoColdReadersOneFetch(t *testing.T) {
	const off, n = 1<<20 + 5000, 300_000
	store := &gatedStore{Store: mem.New(), gate: off + 100_000, open: make(chan struct{})}
	w, ref, data := fineWorker(t, store, 4<<20, nil)
	first := make(chan struct{})
	var once sync.Once
	sinks := []*notifySink{{sink: sink{ctx: context.Background()}, first: func() { once.Do(func() { close(first) }) }},
		{sink: sink{ctx: context.Background()}, first: func() {}}}
	errs := make(chan error, 2)
	read := func(s *notifySink) {
		errs <- w.Read(&pb.ReadRequest{Block: ref, Offset: off, Length: n, Random: true}, s)
	}
	go read(sinks[0])
	select {
	case <-first: // sent while the GET is held at the gate
	case err := <-errs:
		t.Fatalf("the read ended (%v) before the bucket's body did", err)
	case <-time.After(time.Minute):
		t.Fatal("no byte reached the reader while the GET was under way")
	}
	go read(sinks[1])
	for w.stats.misses.Load() < 2 { // the second reader has joined the flight
		select {
		case err := <-errs:
			t.Fatalf("a read ended (%v) before the bucket's body did", err)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	close(store.open)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range sinks {
		if !bytes.Equal(s.got.Bytes(), data[off:off+n]) {
			t.Fatalf("reader %d: wrong bytes", i)
		}
	}
	if g := store.gets.Load(); g != 1 {
		t.Fatalf("%d GETs for two readers of the same range, want 1", g)
	}
}

// notifySink is a sink that calls first at each message it gets.
type notifySink struct {
	sink
	first func()
}

func (s *notifySink) Send(r *pb.ReadResponse) error {
	s.first()
	return s.sink.Send(r)
}

// TestColdReadStalledMidRange: a cold read whose bucket stops sending
// midway through its range fails, in the unavailable class, once the
// retry layer's budget is spent (its bound, not timed here), and leaves
// nothing of the range cached, although whole fine pages of it arrived;
// once the bucket answers again, the read returns the right bytes.
func TestColdReadStalledMidRange(t *testing.T) {
	const off, n = 2 << 20, 512 << 10
	store := &gatedStore{Store: mem.New(), gate: off + 200_000, open: make(chan struct{})}
	p := retry.Policy{StallTimeout: 100 * time.Millisecond, MaxElapsed: 300 * time.Millisecond,
		BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}
	w, ref, data := fineWorker(t, store, 4<<20, &p)
	s := &sink{ctx: context.Background()}
	err := w.Read(&pb.ReadRequest{Block: ref, Offset: off, Length: n, Random: true}, s)
	if !errors.Is(err, fserr.ErrUnavailable) {
		t.Fatalf("a read from a stalled bucket: %v, want the unavailable class", err)
	}
	key := blocks.CacheKey(1, 2)
	if m := w.cache.MissingFine(key, off, n); len(m) != 1 || m[0].Off != off || m[0].Len != n {
		t.Fatalf("after the failed read the cache misses %v, want all of %d+%d", m, off, n)
	}
	if st := w.cache.Stats(); st.Used != 0 || st.Pages != 0 {
		t.Fatalf("after the failed read the cache holds %+v, want nothing", st)
	}
	close(store.open)
	s = &sink{ctx: context.Background()}
	if err := w.Read(&pb.ReadRequest{Block: ref, Offset: off, Length: n, Random: true}, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.got.Bytes(), data[off:off+n]) {
		t.Fatal("wrong bytes after the bucket came back")
	}
	waitFetched(t, w, key)
	if m := w.cache.Missing(key, off, n); len(m) != 0 {
		t.Fatalf("after the read the cache misses %v", m)
	}
}

var _ io.Reader = (*gatedReader)(nil)

// waitFetched waits until no fetch of key is in flight: a random reader
// gets its bytes as they arrive from the bucket, and its read can return
// before the fetch that brought them has filled the cache.
func waitFetched(t *testing.T, w *Worker, key string) {
	t.Helper()
	flying := func() bool {
		w.fetch.mu.Lock()
		defer w.fetch.mu.Unlock()
		return len(w.fetch.mu.blocks[key]) > 0
	}
	deadline := time.Now().Add(time.Minute)
	for flying() {
		if time.Now().After(deadline) {
			t.Fatal("a fetch of the block is still in flight after a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestIdleFillCompletesTheBlock: with idle fill on, a block a random
// reader read cold is fetched whole in the background once no read waits,
// each byte once (the reader's range is not fetched again), and is then
// cached whole.
func TestIdleFillCompletesTheBlock(t *testing.T) {
	const size = 1<<20 + 5000
	store := &gatedStore{Store: mem.New()}
	w, ref, data := fineWorker(t, store, size, nil)
	w.fills = newIdleFill(64 << 10)
	s := &sink{ctx: context.Background()}
	if err := w.Read(&pb.ReadRequest{Block: ref, Offset: 300_000, Length: 100_000, Random: true}, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.got.Bytes(), data[300_000:400_000]) {
		t.Fatal("wrong bytes")
	}
	key := blocks.CacheKey(1, 2)
	deadline := time.Now().Add(time.Minute)
	for len(w.cache.Missing(key, 0, size)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the block is not filled: %v missing", w.cache.Missing(key, 0, size))
		}
		time.Sleep(time.Millisecond)
	}
	if got := store.bytes.Load(); got != size {
		t.Fatalf("%d bytes from the bucket for a block of %d", got, size)
	}
	p := make([]byte, size)
	if _, err := w.cache.ReadAt(key, p, 0); err != nil || !bytes.Equal(p, data) {
		t.Fatalf("the filled block: %v, or wrong bytes", err)
	}
}

// TestFirstReadAtTheFooterIsExact: a reader's first, small read of a block
// past its start, not marked random (a Parquet footer read: a forward seek
// and a read, before the client knows the stream is columnar), fetches its
// range rounded to fine pages, not the fetch chunk around it (up to 4 MiB).
func TestFirstReadAtTheFooterIsExact(t *testing.T) {
	const size, footer = 8<<20 + 3000, 60_000
	store := &gatedStore{Store: mem.New()}
	w, ref, data := fineWorker(t, store, size, nil)
	s := &sink{ctx: context.Background()}
	if err := w.Read(&pb.ReadRequest{Block: ref, Offset: size - footer, Length: footer}, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.got.Bytes(), data[size-footer:]) {
		t.Fatal("wrong bytes")
	}
	if got := store.bytes.Load(); got > footer+cache.DefaultFinePageSize {
		t.Fatalf("a footer read of %d bytes took %d from the bucket", footer, got)
	}
}
