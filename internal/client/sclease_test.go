package client

import (
	"bytes"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratafs/strata/internal/cputime"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// testLease writes a block of n random bytes in pages of ps to a file, as
// the cache lays it out (a write a page), and lends its pages from first
// on. The lease reads by its mapping.
func testLease(t testing.TB, n, ps, first int64) (*lease, []byte, string) {
	t.Helper()
	return testChunkLease(t, n, ps, 0, first)
}

// testChunkLease is testLease with the CRCs of chunks of chunk bytes
// (chunk 0: of whole pages, as a worker asked for no chunks answers).
func testChunkLease(t testing.TB, n, ps, chunk, first int64) (*lease, []byte, string) {
	t.Helper()
	block := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), uint64(ps)))
	for i := range block {
		block[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "block.data")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	resp := &pb.ShortCircuitResponse{Ok: true, PageSize: uint64(ps), FirstPage: uint64(first), BlockLength: uint64(n)}
	for p := int64(0); p < n; p += ps {
		page := block[p:min(p+ps, n)]
		if _, err := w.WriteAt(page, p); err != nil {
			t.Fatal(err)
		}
		if p < first {
			continue
		}
		if chunk == 0 {
			resp.Crcs = append(resp.Crcs, crc32.Checksum(page, castagnoli))
			continue
		}
		resp.ChunkSize = uint64(chunk)
		for c := int64(0); c < int64(len(page)); c += chunk {
			resp.ChunkCrcs = append(resp.ChunkCrcs, crc32.Checksum(page[c:min(c+chunk, int64(len(page)))], castagnoli))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l := openLease(t, path, resp)
	if l.m == nil {
		t.Fatal("the lease's file was not mapped")
	}
	return l, block, path
}

// openLease opens the file at path and makes a lease of it with resp.
func openLease(t testing.TB, path string, resp *pb.ShortCircuitResponse) *lease {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLease(f, resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l
}

// byPread has l read by pread, as a lease whose file could not be mapped.
func byPread(l *lease) *lease {
	l.m.unmap()
	l.m = nil
	return l
}

// bothWays runs test with a lease reading by its mapping and one reading by
// pread.
func bothWays(t *testing.T, test func(t *testing.T, way func(*lease) *lease)) {
	t.Run("mapped", func(t *testing.T) { test(t, func(l *lease) *lease { return l }) })
	t.Run("pread", func(t *testing.T) { test(t, byPread) })
}

// Reads of every shape (inside one page, across pages, whole pages, runs
// longer than verifyRun, up to a short last page) return the block's bytes.
func TestLeaseReadsEveryShape(t *testing.T) { bothWays(t, testLeaseReadsEveryShape) }

func testLeaseReadsEveryShape(t *testing.T, way func(*lease) *lease) {
	const ps = 4096
	n := int64(verifyRun + 3*ps + 100) // runs longer than verifyRun; a short last page
	for _, first := range []int64{0, 2 * ps} {
		l, block, _ := testLease(t, n, ps, first)
		l = way(l)
		points := []int64{first, first + 1, first + ps - 1, first + ps, first + ps + 1, verifyRun, verifyRun + 1,
			n - ps - 100, n - 100, n - 1}
		for _, off := range points {
			for _, end := range append(points, n) {
				if end <= off {
					continue
				}
				buf := make([]byte, end-off)
				if err := l.readAt(buf, off); err != nil {
					t.Fatalf("first %d, read [%d, %d): %v", first, off, end, err)
				}
				if !bytes.Equal(buf, block[off:end]) {
					t.Fatalf("first %d, read [%d, %d): wrong bytes", first, off, end)
				}
			}
		}
	}
}

// A corrupt page fails every read that touches it, whole or cut, and no
// other.
func TestLeaseDetectsCorruptPage(t *testing.T) { bothWays(t, testLeaseDetectsCorruptPage) }

func testLeaseDetectsCorruptPage(t *testing.T, way func(*lease) *lease) {
	const ps = 4096
	l, block, path := testLease(t, 4*ps, ps, 0)
	l = way(l)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{block[2*ps+17] ^ 0xff}, 2*ps+17); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, r := range []struct{ off, end int64 }{{0, 4 * ps}, {2 * ps, 3 * ps}, {2*ps + 10, 2*ps + 20},
		{ps + 5, 2*ps + 1}, {3*ps - 1, 3*ps + 1}} {
		var bad *corruptPageError
		if err := l.readAt(make([]byte, r.end-r.off), r.off); !errors.As(err, &bad) || bad.off != 2*ps || bad.n != ps {
			t.Fatalf("read [%d, %d) of a corrupt page: %v", r.off, r.end, err)
		}
	}
	for _, r := range []struct{ off, end int64 }{{0, 2 * ps}, {3 * ps, 4 * ps}, {ps + 5, 2 * ps}} {
		if err := l.readAt(make([]byte, r.end-r.off), r.off); err != nil {
			t.Fatalf("read [%d, %d) next to a corrupt page: %v", r.off, r.end, err)
		}
	}
}

// A chunk that passed its CRC once is checked again on every read, between
// the lease's looks at its file too: no proof that it was checked is kept
// (docs/datapath.md, "How a cached page is verified"), so bytes that
// changed under a lease after a read passed are caught at the next read.
func TestCheckedChunkIsCheckedAgain(t *testing.T) { bothWays(t, testCheckedChunkIsCheckedAgain) }

func testCheckedChunkIsCheckedAgain(t *testing.T, way func(*lease) *lease) {
	const ps, chunk = 64 << 10, 16 << 10
	l, block, path := testChunkLease(t, 4*ps, ps, chunk, 0)
	l = way(l)
	buf := make([]byte, 4096)
	at := int64(ps + chunk + 4096)
	if err := l.readAt(buf, at); err != nil || !bytes.Equal(buf, block[at:at+4096]) {
		t.Fatalf("first read: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := int64(ps + chunk + 3*4096) // in the read's chunk, outside the read
	if _, err := f.WriteAt([]byte{block[bad] ^ 1}, bad); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var corrupt *corruptPageError
	if err := l.readAt(buf, at); !errors.As(err, &corrupt) || corrupt.off != ps+chunk || corrupt.n != chunk {
		t.Fatalf("the same read after its chunk changed: %v", err)
	}
	if err := l.readAt(buf, ps+2*chunk); err != nil || !bytes.Equal(buf, block[ps+2*chunk:ps+2*chunk+4096]) {
		t.Fatalf("a read of the next chunk: %v", err)
	}
}

// A large read (runs of verifyRun over pages small and large) reports the
// corrupt page in its middle, and only that page; reads around it return
// the block's bytes.
func TestLargeReadDetectsCorruptPage(t *testing.T) { bothWays(t, testLargeReadDetectsCorruptPage) }

func testLargeReadDetectsCorruptPage(t *testing.T, way func(*lease) *lease) {
	for _, ps := range []int64{64 << 10, 1 << 20, 1<<20 + 4096} {
		n := 8*ps + 12345 // a short last page
		l, block, path := testLease(t, n, ps, 0)
		l = way(l)
		buf := make([]byte, n)
		if err := l.readAt(buf, 0); err != nil || !bytes.Equal(buf, block) {
			t.Fatalf("page size %d: read of a sound block: %v", ps, err)
		}
		corrupt(t, path, 4*ps+ps/2+3) // in the middle of the read
		for _, r := range []struct{ off, end int64 }{{0, n}, {1, n - 1}, {3 * ps, 6 * ps}, {4*ps + 1, 4*ps + 2}} {
			var bad *corruptPageError
			if err := l.readAt(buf[:r.end-r.off], r.off); !errors.As(err, &bad) || bad.off != 4*ps || bad.n != ps {
				t.Fatalf("page size %d, read [%d, %d) over a corrupt page: %v", ps, r.off, r.end, err)
			}
		}
		for _, r := range []struct{ off, end int64 }{{0, 4 * ps}, {5 * ps, n}, {5*ps + 1, n}} {
			if err := l.readAt(buf[:r.end-r.off], r.off); err != nil || !bytes.Equal(buf[:r.end-r.off], block[r.off:r.end]) {
				t.Fatalf("page size %d, read [%d, %d) beside a corrupt page: %v", ps, r.off, r.end, err)
			}
		}
	}
}

// A lease lent with chunk CRCs checks the chunks a read touches, not whole
// pages: reads of every shape return the block's bytes, and a corrupt
// chunk fails the reads that touch it, reported as that chunk, and no
// other read of its page.
func TestLeaseChecksChunks(t *testing.T) { bothWays(t, testLeaseChecksChunks) }

func testLeaseChecksChunks(t *testing.T, way func(*lease) *lease) {
	const ps, chunk = 64 << 10, 16 << 10
	n := int64(3*ps + 5000) // a short last page, its last chunk short too
	for _, first := range []int64{0, ps} {
		l, block, path := testChunkLease(t, n, ps, chunk, first)
		l = way(l)
		for _, r := range []struct{ off, end int64 }{{first, n}, {first + 1, first + 10}, {first + chunk - 1, first + chunk + 1},
			{2*ps + 100, n}, {n - 1, n}, {first + 5, 3*ps + 1}} {
			buf := make([]byte, r.end-r.off)
			if err := l.readAt(buf, r.off); err != nil || !bytes.Equal(buf, block[r.off:r.end]) {
				t.Fatalf("first %d, read [%d, %d): %v", first, r.off, r.end, err)
			}
		}
		bad := int64(2*ps + chunk) // the second chunk of the third page
		corrupt(t, path, bad+chunk/2)
		for _, r := range []struct{ off, end int64 }{{bad, bad + chunk}, {bad + 10, bad + 20}, {bad - 1, bad + 1}, {first, n}} {
			var e *corruptPageError
			if err := l.readAt(make([]byte, r.end-r.off), r.off); !errors.As(err, &e) || e.off != bad || e.n != chunk {
				t.Fatalf("first %d, read [%d, %d) over a corrupt chunk: %v", first, r.off, r.end, err)
			}
		}
		for _, r := range []struct{ off, end int64 }{{2 * ps, bad}, {bad + chunk, 3 * ps}, {bad + chunk + 7, n}} {
			buf := make([]byte, r.end-r.off)
			if err := l.readAt(buf, r.off); err != nil || !bytes.Equal(buf, block[r.off:r.end]) {
				t.Fatalf("first %d, read [%d, %d) beside a corrupt chunk of its page: %v", first, r.off, r.end, err)
			}
		}
	}
}

// corrupt flips the byte at off of the file at path.
func corrupt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{b[0] ^ 0xff}, off); err != nil {
		t.Fatal(err)
	}
}

// addUnlessCovered keeps a lease that covers the range (in use, maybe)
// and replaces one that does not.
func TestLeasesAddUnlessCovered(t *testing.T) {
	var ls leases
	defer ls.close()
	head, _, _ := testLease(t, 3*4096, 4096, 0)
	tail, _, _ := testLease(t, 3*4096, 4096, 2*4096)
	other, _, _ := testLease(t, 3*4096, 4096, 0)
	k := leaseKey{inode: 1, block: 2}
	if !ls.addUnlessCovered(k, tail, 0, 10) || ls.get(k, 2*4096, 10) != tail {
		t.Fatal("a block without a lease did not get one")
	}
	if !ls.addUnlessCovered(k, head, 0, 10) || ls.get(k, 0, 10) != head {
		t.Fatal("a lease of another range was not replaced")
	}
	if ls.addUnlessCovered(k, other, 0, 10) || ls.get(k, 0, 10) != head {
		t.Fatal("a lease covering the range was replaced")
	}
	if err := head.readAt(make([]byte, 10), 0); err != nil {
		t.Fatalf("the kept lease: %v", err)
	}
}

// A lease whose file was unlinked (the cache evicted the block) ends at
// its next look at the file: its first read, or a read linkCheckEvery
// after the last look. In between it reads on without an fstat.
func TestLeaseOfUnlinkedFileEnds(t *testing.T) { bothWays(t, testLeaseOfUnlinkedFileEnds) }

func testLeaseOfUnlinkedFileEnds(t *testing.T, way func(*lease) *lease) {
	l, block, path := testLease(t, 8192, 4096, 0)
	l = way(l)
	buf := make([]byte, 10)
	if err := l.readAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := l.readAt(buf, 100); err != nil || !bytes.Equal(buf, block[100:110]) {
		t.Fatalf("read of an unlinked file before the next look: %v", err)
	}
	l.looked.Add(-int64(linkCheckEvery)) // the last look, as long ago as that
	if err := l.readAt(buf, 0); !errors.Is(err, errUnlinked) {
		t.Fatalf("read of an unlinked file at the next look: %v", err)
	}
	if err := l.readAt(buf, 0); !errors.Is(err, errUnlinked) {
		t.Fatalf("read of an unlinked file after the look: %v", err)
	}
}

// The cost of checking every page on every read: a lease's 1 MiB reads of
// a 64 MiB block in the page cache (written a page a call, as the cache
// does) against plain preads of the same file (the raw baseline of `strata
// bench data`); cpu-ns/op is the process's CPU time. LeaseRead reads by
// one mapping throughout, LeaseReadNewLease by a new lease (a new mapping)
// every pass over the block, as a reader that reads a block once does,
// LeaseReadPread by pread then CRC (a lease without a mapping). See
// docs/benchmarks.md.
func BenchmarkLeaseRead(b *testing.B) { benchmarkRead(b, "lease") }

func BenchmarkLeaseReadNewLease(b *testing.B) { benchmarkRead(b, "new lease") }

func BenchmarkLeaseReadPread(b *testing.B) { benchmarkRead(b, "pread lease") }

func BenchmarkPreadBaseline(b *testing.B) { benchmarkRead(b, "pread") }

func benchmarkRead(b *testing.B, way string) {
	const n, ps = 64 << 20, 1 << 20
	l, _, path := testLease(b, n, ps, 0)
	resp := &pb.ShortCircuitResponse{Ok: true, PageSize: ps, BlockLength: n, Crcs: l.crcs}
	if way == "pread lease" {
		byPread(l)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	cpu0 := cputime.Process()
	b.ResetTimer()
	for i := range b.N {
		off := int64(i%(n/len(buf))) * int64(len(buf))
		if way == "new lease" && off == 0 && i > 0 {
			l.close()
			l = openLease(b, path, resp)
		}
		var err error
		if way == "pread" {
			_, err = l.f.ReadAt(buf, off)
		} else {
			err = l.readAt(buf, off)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
}

// The cost of a random 4 KiB read by a lease whose CRCs cover chunks of
// 16 KiB, 64 KiB (the cache's default) and whole 1 MiB pages, against a
// plain pread of the same 4 KiB; cpu-ns/op is the process's CPU time. The
// block is 256 MiB, so that the chunks a read checks are mostly not in
// the CPU's caches, as in `strata bench data`'s warm random reads.
func BenchmarkLeaseRandom4KiB(b *testing.B) {
	for _, c := range []struct {
		name  string
		chunk int64
	}{{"chunk16KiB", 16 << 10}, {"chunk64KiB", 64 << 10}, {"page1MiB", 0}, {"pread", 0}} {
		b.Run(c.name, func(b *testing.B) {
			const n, ps = 256 << 20, 1 << 20
			l, _, _ := testChunkLease(b, n, ps, c.chunk, 0)
			buf := make([]byte, 4096)
			rng := rand.New(rand.NewPCG(1, 2))
			cpu0 := cputime.Process()
			b.ResetTimer()
			for range b.N {
				off := rng.Int64N(n/4096) * 4096
				var err error
				if c.name == "pread" {
					_, err = l.f.ReadAt(buf, off)
				} else {
					err = l.readAt(buf, off)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
