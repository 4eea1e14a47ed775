package client

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"unsafe"

	"github.com/stratafs/strata/internal/crc32c"
)

// errMapFault is a read of a lease's mapping that faulted: the file was
// cut short under it. The caller falls back as for any failed lease read.
var errMapFault = errors.New("client: the mapped cache file faulted")

// mapping is a lease's range of its cache file mapped read-only, so that a
// read copies its pages to the caller and computes their CRCs in one pass
// (crc32c.Copy) instead of a pread and then a second pass over the copy.
// Measured over a 64 MiB file in the page cache, 1 MiB a read
// (docs/benchmarks.md): pread then CRC costs 1.6-1.8 times a plain pread's
// CPU time; a new mapping read once, 0.9-1.05 times where the file is held
// in 2 MiB folios (one fault maps 2 MiB by PMD), 1.3-1.4 times in 1 MiB
// ones (a fault per 16 pages of 4 KiB, and their TLB misses).
//
// NB: the pages are left to fault in: MAP_POPULATE and MADV_POPULATE_READ
// took longer. The cache writes each fetched range in one call, and
// fetches on a grid of 4 MiB from the block's start, so that its files
// are held in 2 MiB folios but for each block's first 2 MiB.
type mapping struct {
	off  int64  // the file offset of data[0]
	data []byte // unmapped once closed and no read uses it
	mu   struct {
		sync.Mutex
		readers int
		closed  bool
	}
}

// mapLease maps [off, end) of f, or returns nil where mapping is not worth
// it or fails: the lease then reads by pread. off is rounded down to 2 MiB,
// so that the kernel, which places a mapping at an address aligned as its
// offset, can map the 2 MiB folios of a file written in large runs whole.
func mapLease(f *os.File, off, end int64) *mapping {
	off -= off % (2 << 20)
	if end <= off || unsafe.Sizeof(uintptr(0)) < 8 { // a 32-bit address space is too small for many leases
		return nil
	}
	data, err := syscall.Mmap(int(f.Fd()), off, int(end-off), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return &mapping{off: off, data: data}
}

// acquire reports whether the mapping is open, and if so keeps it mapped
// until release.
func (m *mapping) acquire() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return false
	}
	m.mu.readers++
	return true
}

func (m *mapping) release() {
	m.mu.Lock()
	m.mu.readers--
	last := m.mu.closed && m.mu.readers == 0
	m.mu.Unlock()
	if last {
		_ = syscall.Munmap(m.data)
	}
}

// unmap ends the mapping, at once or when the last read using it is done,
// without waiting for it: a lease is closed under the leases' lock.
func (m *mapping) unmap() {
	m.mu.Lock()
	was := m.mu.closed
	m.mu.closed = true
	last := !was && m.mu.readers == 0
	m.mu.Unlock()
	if last {
		_ = syscall.Munmap(m.data)
	}
}

// readMapped fills buf from [off, off+len(buf)), which the lease covers,
// from the mapping, checking every unit (chunk or page) it touches whole
// against its CRC: the bytes inside the range are copied and checked in one
// pass, those of a unit the range cuts outside it are only checked. Nothing in buf is to
// be used unless it returns nil. The file must hold all of the lease's
// range (a page past its end faults: errMapFault).
func (l *lease) readMapped(buf []byte, off int64) (err error) {
	m := l.m
	if !m.acquire() {
		return os.ErrClosed // the lease ended meanwhile
	}
	defer m.release()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%w at %#x", errMapFault, fault.Addr())
		}
	}()
	end := off + int64(len(buf))
	for p := off - (off-l.first)%l.unit; p < end; {
		unitEnd := min(p+l.unit, l.end)
		if p >= off && unitEnd <= end {
			run := unitEnd // whole units from p, up to verifyRun
			for run < end && run-p < verifyRun && min(run+l.unit, l.end) <= end {
				run = min(run+l.unit, l.end)
			}
			if err := l.copyRun(buf[p-off:run-off], m.data[p-m.off:run-m.off], p); err != nil {
				return err
			}
			p = run
			continue
		}
		unit := m.data[p-m.off : unitEnd-m.off]
		from, to := max(p, off), min(unitEnd, end)
		crc := crc32c.Update(0, unit[:from-p])
		crc = crc32c.Copy(buf[from-off:to-off], unit[from-p:to-p], crc)
		crc = crc32c.Update(crc, unit[to-p:])
		if crc != l.crcs[(p-l.first)/l.unit] {
			return &corruptPageError{off: p, n: unitEnd - p}
		}
		p = unitEnd
	}
	return nil
}

// copyRun copies src, the whole units at p, to dst in one pass and checks
// the CRC of the run against its units' CRCs combined: a copy per 64 KiB
// unit costs a fifth more CPU than one per 1 MiB (each pass starts its
// streams over). Only if the run fails are its units checked one by one,
// to report the first that fails.
func (l *lease) copyRun(dst, src []byte, p int64) error {
	first := (p - l.first) / l.unit
	want := l.crcs[first]
	for i := int64(1); i*l.unit < int64(len(src)); i++ {
		k := l.comb
		if n := min(l.unit, int64(len(src))-i*l.unit); n != l.unit { // the block's short last unit
			k = crc32c.CombinerFor(n)
		}
		want = k.Combine(want, l.crcs[first+i])
	}
	if crc32c.Copy(dst, src, 0) == want {
		return nil
	}
	for i := int64(0); i < int64(len(src)); i += l.unit {
		u := src[i:min(i+l.unit, int64(len(src)))]
		if crc32c.Update(0, u) != l.crcs[first+i/l.unit] {
			return &corruptPageError{off: p + i, n: int64(len(u))}
		}
	}
	return errMapChanged
}

// errMapChanged is a run of a mapping that failed its CRC once and passed
// it unit by unit when checked again: the file changed under the read (a
// unit rewritten). The caller falls back as for any failed lease read.
var errMapChanged = errors.New("client: the mapped cache file changed under a read")
