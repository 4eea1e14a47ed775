package client

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/crc32c"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// leaseTTL is how long a client reads a block's cache file on its own
// before asking the worker again: at least that often the worker's LRU
// learns of the reads, and a file the cache let go is let go here too.
var leaseTTL = 2 * time.Second

// linkCheckEvery is how often a lease looks at its file (fstat): whether the
// cache unlinked it, and whether it still holds the lease's range for the
// mapping. An fstat cost about a sixth of a warm random 4 KiB read's CPU
// when made on every read; at most every linkCheckEvery it costs nothing
// measurable, and a lease still ends within leaseTTL however seldom it
// looks.
var linkCheckEvery = 100 * time.Millisecond

// maxLeases bounds the descriptors one worker's leases keep open.
const maxLeases = 64

// verifyRun is the most a lease reads with one pread: whole units up to it
// land in the caller's buffer and are checked while still in the CPU's
// cache (one L2's worth here); far larger reads would check them from
// memory, far smaller ones pay more per-call overhead.
const verifyRun = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// corruptPageError is a cached unit (a chunk or a page) [off, off+n) of a
// block that failed its CRC.
type corruptPageError struct{ off, n int64 }

func (e *corruptPageError) Error() string {
	return fmt.Sprintf("client: the cached bytes [%d, %d) failed their CRC", e.off, e.off+e.n)
}

// errUnlinked is a lease whose file the cache evicted or dropped.
var errUnlinked = errors.New("client: the lent cache file was removed")

// lease is a block's cache file lent by its worker, with the CRCs of the
// pages [first, end) that the worker said were cached, one per unit: per
// chunk of a page where the worker lent its chunks' CRCs (a small read
// then checks the chunks it touches, not whole pages), else per page.
// Blocks never change,
// so the CRCs hold for as long as the file is read: the cache rewrites a
// dropped page with the same bytes, and removes a file only by unlinking
// it, which an open descriptor survives.
type lease struct {
	f     *os.File
	m     *mapping        // nil: read by pread
	unit  int64           // bytes per CRC: the chunk, or the page; divides the page size
	comb  crc32c.Combiner // of unit
	first int64
	end   int64 // exclusive: the block's end or a page boundary
	crcs  []uint32
	// looked is when the lease last found its file linked and holding its
	// whole range (Unix nanoseconds, monotonic within the process); 0:
	// never, or the last look found it cut short.
	looked atomic.Int64
}

// newLease makes a lease of a short-circuit answer and its file, which it
// owns from then on.
func newLease(f *os.File, resp *pb.ShortCircuitResponse) (*lease, error) {
	ps, first := int64(resp.PageSize), int64(resp.FirstPage)
	unit, crcs := ps, resp.Crcs
	if resp.ChunkSize != 0 {
		unit, crcs = int64(resp.ChunkSize), resp.ChunkCrcs
	}
	if ps <= 0 || unit <= 0 || ps%unit != 0 || first%ps != 0 || len(crcs) == 0 {
		return nil, errors.New("short-circuit: malformed response")
	}
	end := min(first+int64(len(crcs))*unit, int64(resp.BlockLength))
	return &lease{f: f, m: mapLease(f, first, end), unit: unit, comb: crc32c.CombinerFor(unit), first: first, end: end,
		crcs: crcs}, nil
}

func (l *lease) covers(off, n int64) bool { return off >= l.first && off+n <= l.end }

// readAt fills buf from [off, off+len(buf)), which the lease covers,
// checking every unit it touches against its CRC; nothing in buf is to be
// used unless it returns nil. It reads by the lease's mapping while the
// file holds the lease's whole range, else by pread (readByPread).
//
// NB: a concurrent close is safe: it unmaps only once the reads of the
// mapping are done, and os.File keeps the descriptor open until a pread in
// flight returns; a later read fails with os.ErrClosed.
func (l *lease) readAt(buf []byte, off int64) error {
	whole, err := l.look()
	if err != nil {
		return err
	}
	if l.m != nil && whole {
		return l.readMapped(buf, off)
	}
	return l.readByPread(buf, off)
}

// look reports whether the lease's file holds its whole range, by an fstat
// at most every linkCheckEvery (in between, what the last one found), or
// errUnlinked. A file cut short under the mapping between two looks makes
// a mapped read fail with errMapFault, as a cut racing with a read does
// anyway.
func (l *lease) look() (bool, error) {
	now := nanotime()
	if t := l.looked.Load(); t != 0 && now-t < int64(linkCheckEvery) {
		return true, nil
	}
	size, err := l.size()
	if err != nil {
		return false, err
	}
	whole := size >= l.end
	if whole {
		l.looked.Store(now)
	}
	return whole, nil
}

// epoch makes nanotime monotonic: time.Since reads the monotonic clock.
var epoch = time.Now()

func nanotime() int64 { return int64(time.Since(epoch)) + 1 } // never 0

// readByPread is readAt by pread: units wholly inside the range are read
// straight into buf and checked there; a unit the range cuts goes through
// a pooled buffer.
func (l *lease) readByPread(buf []byte, off int64) error {
	end := off + int64(len(buf))
	for p := off - (off-l.first)%l.unit; p < end; {
		unitEnd := min(p+l.unit, l.end)
		if p < off || unitEnd > end {
			if err := l.readPartial(buf, off, p, unitEnd); err != nil {
				return err
			}
			p = unitEnd
			continue
		}
		run := unitEnd // all the whole units from p
		for run < end && min(run+l.unit, l.end) <= end {
			run = min(run+l.unit, l.end)
		}
		if err := l.readUnits(buf[p-off:run-off], p); err != nil {
			return err
		}
		p = run
	}
	return nil
}

// linked returns errUnlinked if the cache removed the lease's file. An
// evicted block's file is unlinked: reading it on would hide the reads
// from the worker, whose cache would never fetch the block again.
func (l *lease) linked() error {
	_, err := l.size()
	return err
}

// size returns the size of the lease's file, or errUnlinked (see linked).
func (l *lease) size() (int64, error) {
	st, err := l.f.Stat()
	if err != nil {
		return 0, err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink == 0 {
		return 0, errUnlinked
	}
	return st.Size(), nil
}

// readUnits reads the whole units at p into dst and checks them, in runs
// of up to verifyRun.
func (l *lease) readUnits(dst []byte, p int64) error {
	n := int64(len(dst))
	for i := int64(0); i < n; {
		j := min(i+l.unit, n)
		for j < n && j-i < verifyRun {
			j = min(j+l.unit, n)
		}
		if err := l.readWhole(dst[i:j], p+i); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// readWhole reads the whole units at p into dst and checks them.
func (l *lease) readWhole(dst []byte, p int64) error {
	if _, err := l.f.ReadAt(dst, p); err != nil {
		return fmt.Errorf("short-circuit read: %w", err)
	}
	for i := int64(0); i < int64(len(dst)); i += l.unit {
		if err := l.check(dst[i:min(i+l.unit, int64(len(dst)))], p+i); err != nil {
			return err
		}
	}
	return nil
}

// readPartial reads the unit [p, unitEnd), checks it and copies the part
// of it inside [off, off+len(buf)) to buf.
func (l *lease) readPartial(buf []byte, off, p, unitEnd int64) error {
	bp := pageBufs.get(int(unitEnd - p))
	defer pageBufs.put(bp)
	unit := (*bp)[:unitEnd-p]
	if err := l.readUnits(unit, p); err != nil {
		return err
	}
	from, to := max(p, off), min(unitEnd, off+int64(len(buf)))
	copy(buf[from-off:to-off], unit[from-p:to-p])
	return nil
}

// check checks the unit at p, read into b.
func (l *lease) check(b []byte, p int64) error {
	if crc32.Checksum(b, castagnoli) != l.crcs[(p-l.first)/l.unit] {
		return &corruptPageError{off: p, n: int64(len(b))}
	}
	return nil
}

func (l *lease) close() {
	if l.m != nil {
		l.m.unmap()
	}
	l.f.Close()
}

// leaseKey names a block, and in cache mode the version of its object: a
// file opened again after its object changed is another block's bytes,
// which a lease of the old version must not serve.
type leaseKey struct {
	inode, block uint64
	version      string
}

func keyOf(ref *pb.BlockRef) leaseKey { return leaseKey{ref.InodeId, ref.BlockId, ref.Version} }

// leases are one worker's leases by block. Each ends leaseTTL after it was
// granted, or when replaced, or when a read by it fails.
type leases struct {
	mu struct {
		sync.Mutex
		m      map[leaseKey]*lease
		closed bool
	}
}

// get returns a lease covering [off, off+n) of block k, or nil.
func (ls *leases) get(k leaseKey, off, n int64) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.mu.m[k]; l != nil && l.covers(off, n) {
		return l
	}
	return nil
}

// add installs l for block k, replacing what was there, and ends it after
// leaseTTL.
func (ls *leases) add(k leaseKey, l *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.addLocked(k, l)
}

// addUnlessCovered installs l for block k unless k has a lease covering
// [off, off+n) (in use, maybe), and reports whether it did.
func (ls *leases) addUnlessCovered(k leaseKey, l *lease, off, n int64) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if old := ls.mu.m[k]; old != nil && old.covers(off, n) || ls.mu.closed {
		return false
	}
	ls.addLocked(k, l)
	return true
}

func (ls *leases) addLocked(k leaseKey, l *lease) {
	if ls.mu.closed {
		l.close()
		return
	}
	if ls.mu.m == nil {
		ls.mu.m = map[leaseKey]*lease{}
	}
	if old := ls.mu.m[k]; old != nil {
		ls.dropLocked(k, old)
	}
	for victim, old := range ls.mu.m { // any one: leases are short-lived
		if len(ls.mu.m) < maxLeases {
			break
		}
		ls.dropLocked(victim, old)
	}
	ls.mu.m[k] = l
	time.AfterFunc(leaseTTL, func() { ls.drop(k, l) })
}

// drop ends l if it is still block k's lease.
func (ls *leases) drop(k leaseKey, l *lease) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.dropLocked(k, l)
}

func (ls *leases) dropLocked(k leaseKey, l *lease) {
	if ls.mu.m[k] == l {
		delete(ls.mu.m, k)
		l.close()
	}
}

// endAll ends every lease now; later reads get new ones.
func (ls *leases) endAll() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.endAllLocked()
}

func (ls *leases) endAllLocked() {
	for k, l := range ls.mu.m {
		ls.dropLocked(k, l)
	}
}

func (ls *leases) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.mu.closed = true
	ls.endAllLocked()
}

// pageBufs recycles the buffers of units that reads cut.
var pageBufs bufPool

type bufPool struct{ p sync.Pool }

func (b *bufPool) get(n int) *[]byte {
	if v, ok := b.p.Get().(*[]byte); ok && cap(*v) >= n {
		return v
	}
	s := make([]byte, n)
	return &s
}

func (b *bufPool) put(p *[]byte) { b.p.Put(p) }
