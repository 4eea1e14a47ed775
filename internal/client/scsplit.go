package client

import (
	"fmt"
	"hash/crc32"
	"runtime"
	"sync/atomic"
	"time"
)

// A lease reads a large span of pages on two cores: the span is cut into
// pieces, each a pread and the CRC32C of what it read, and the caller's
// goroutine and a helper goroutine take the next piece until none is left.
// A pread and the CRC behind it cost about 1.6 preads on one core; shared
// so, the span takes about 0.8-0.9 of one core's pread in wall-clock time,
// for about 2x its CPU time (see docs/benchmarks.md). A piece is whole
// pages or part of one page; parts of a page are checked once all are
// read, their CRCs combined.
//
// NB: the helper spins (yielding to other goroutines) for helperSpin after
// its last piece, and the caller spins while the helper ends its last
// piece. Waking a parked goroutine's thread on the idle core of this VM
// takes 60-110 µs, about a whole 1 MiB read: a helper started per read
// took one piece in four, and split reads were no faster than one core's.
// A stream of reads keeps the helper running and so the other core busy.
//
// The caller never waits for the helper to start: pieces are claimed one
// at a time, and a helper that is late finds fewer or none left. The
// caller waits only for pieces the helper claimed, so no piece is still
// being read into the buffer once readSplit returns. Splitting pays only
// while the other core is free. When it is not (other processes or other
// readers keep it busy), the helper takes no piece or is preempted in one,
// and a split read costs more than one core's; so a split that did not pay
// turns splitting off for a while (see splitGate).

// splitMin is the least span of whole pages read on two cores: below it,
// waking the other core costs about what it saves. (A variable for the
// benchmarks, which compare one core's reads with it.)
var splitMin int64 = 512 << 10

// splitPiece is the most one piece reads: small enough that the two cores
// end close together, large enough that a pread's fixed cost stays small.
const splitPiece = 256 << 10

// piece is [off, off+n) of the block, whole pages or, when page >= 0,
// part of the page at page.
type piece struct {
	off, n, page int64
	crc          uint32 // of a part of a page, once read
	err          error
}

// readSplit reads the whole pages at p into dst on two cores and checks
// them; see above.
func (l *lease) readSplit(dst []byte, p int64) error {
	j := &splitJob{l: l, dst: dst, p: p, pcs: l.cut(p, p+int64(len(dst)))}
	theHelper.post(j)
	start := time.Now()
	mine := j.work()
	paid := false
	if mine < len(j.pcs) {
		worked := time.Since(start)
		for j.done.Load() < int64(len(j.pcs)) {
			runtime.Gosched()
		}
		// It paid if the wait for the helper's last piece was shorter than
		// one of ours: the helper ran alongside, not preempted.
		paid = mine > 0 && time.Since(start)-worked <= worked/time.Duration(mine)
	}
	splits.record(paid)
	return l.checkPieces(j.pcs)
}

// splitJob is the pieces of one split read, which its caller and the
// helper claim one at a time.
type splitJob struct {
	l    *lease
	dst  []byte
	p    int64
	pcs  []piece
	next atomic.Int64 // the next piece to claim
	done atomic.Int64 // pieces read and checked
}

// work reads pieces until none is left to claim, and returns how many.
func (j *splitJob) work() (n int) {
	for i := j.next.Add(1) - 1; i < int64(len(j.pcs)); i = j.next.Add(1) - 1 {
		pc := &j.pcs[i]
		j.l.readPiece(j.dst[pc.off-j.p:pc.off-j.p+pc.n], pc)
		j.done.Add(1)
		n++
	}
	return n
}

// helperSpin is how long the helper waits for the next split read before
// it ends: more than the gap between a stream's reads.
const helperSpin = 200 * time.Microsecond

// helper is the goroutine that reads pieces beside the callers of split
// reads; it runs while split reads come, and ends helperSpin after the last.
type helper struct {
	job     atomic.Pointer[splitJob] // the latest split read, until taken
	running atomic.Bool
}

var theHelper helper

// post offers j to the helper, starting it if it is not running. A job
// the helper takes late has no piece left: taking it is harmless.
func (h *helper) post(j *splitJob) {
	h.job.Store(j)
	if h.running.CompareAndSwap(false, true) {
		go h.loop()
	}
}

func (h *helper) loop() {
	last := time.Now()
	for {
		if j := h.job.Swap(nil); j != nil {
			j.work()
			last = time.Now()
			continue
		}
		if time.Since(last) > helperSpin {
			h.running.Store(false)
			// A job posted meanwhile saw the helper running: take it on.
			if h.job.Load() == nil || !h.running.CompareAndSwap(false, true) {
				return
			}
			continue
		}
		runtime.Gosched()
	}
}

// maxSplitOff is the most reads that a run of split reads that did not pay
// turns splitting off for.
const maxSplitOff = 256

// splits is the gate of split reads, shared by all leases: whether the
// other core is free is the machine's state, not a lease's.
var splits splitGate

// splitGate turns split reads off after one that did not pay, for 1, 2, 4
// ... up to maxSplitOff reads as such splits follow one another; a split
// that paid resets it. A read while it is off reads on one core.
type splitGate struct {
	off  atomic.Int64 // reads left to read on one core
	next atomic.Int64 // what the next split that does not pay turns off
}

func (g *splitGate) open() bool { return g.off.Load() <= 0 || g.off.Add(-1) < 0 }

func (g *splitGate) record(paid bool) {
	if paid {
		g.next.Store(1)
		return
	}
	n := min(max(g.next.Load(), 1), maxSplitOff)
	g.off.Store(n)
	g.next.Store(2 * n)
}

// cut cuts the whole pages [p, end) into pieces of at most splitPiece.
func (l *lease) cut(p, end int64) []piece {
	pcs := make([]piece, 0, (end-p+splitPiece-1)/splitPiece+1)
	for p < end {
		pageEnd := min(p+l.ps, end)
		if pageEnd-p > splitPiece {
			for s := p; s < pageEnd; s += splitPiece {
				pcs = append(pcs, piece{off: s, n: min(splitPiece, pageEnd-s), page: p})
			}
			p = pageEnd
			continue
		}
		e := pageEnd
		for e < end && min(e+l.ps, end)-p <= splitPiece {
			e = min(e+l.ps, end)
		}
		pcs = append(pcs, piece{off: p, n: e - p, page: -1})
		p = e
	}
	return pcs
}

// readPiece reads piece pc into dst and checks its pages, or CRCs it if
// it is part of a page.
func (l *lease) readPiece(dst []byte, pc *piece) {
	if _, err := l.f.ReadAt(dst, pc.off); err != nil {
		pc.err = fmt.Errorf("short-circuit read: %w", err)
		return
	}
	if pc.page >= 0 {
		pc.crc = crc32.Checksum(dst, castagnoli)
		return
	}
	for i := int64(0); i < pc.n && pc.err == nil; i += l.ps {
		pc.err = l.check(dst[i:min(i+l.ps, pc.n)], pc.off+i)
	}
}

// checkPieces returns the first error of the read pieces, checking the
// pages read in parts by their parts' combined CRCs.
func (l *lease) checkPieces(pcs []piece) error {
	for i := 0; i < len(pcs); {
		pc := &pcs[i]
		if pc.err != nil {
			return pc.err
		}
		i++
		if pc.page < 0 {
			continue
		}
		crc, end := pc.crc, pc.off+pc.n
		for ; i < len(pcs) && pcs[i].page == pc.page; i++ {
			if pcs[i].err != nil {
				return pcs[i].err
			}
			crc = crc32cCombine(crc, pcs[i].crc, pcs[i].n)
			end = pcs[i].off + pcs[i].n
		}
		if crc != l.crcs[(pc.page-l.first)/l.ps] {
			return &corruptPageError{off: pc.page, n: end - pc.page}
		}
	}
	return nil
}
