package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// putOp is one Put in flight.
type putOp struct {
	b         *block
	first     int64      // index of the first page of data
	mine      []int64    // pages this Put writes (it marked them pending)
	crcs      [][]uint32 // of each page of mine, by chunk
	others    []int64    // pages other Puts are writing
	need      int64      // bytes reserved for mine
	published bool
	readable  bool // PutReadable's readable was called
}

// Put caches data as the bytes of block key at off. off must be a multiple
// of the page size; data is cut into pages, all full but the last, which may
// be short only if it is the block's last page. Pages already cached are
// skipped (Put is idempotent; blocks never change); pages another Put is
// writing are waited for. Each new page is written with the CRC32C of each
// of its chunks.
//
// If a directory would go above its high watermark, Put first evicts it
// down to the low one; if the file system runs out of space (a shared disk
// can fill below the capacity), Put evicts and retries. It returns ErrFull
// if nothing more can be evicted.
func (c *Cache) Put(key string, off int64, data []byte) error {
	return c.PutReadable(key, off, data, nil)
}

// PutReadable is Put calling readable, if not nil, as soon as every page
// of data can be read: before Put makes its own pages durable (the
// fdatasync and the sidecar record, which a reader does not need and
// which can take long on a busy disk). A Put that fails before its pages
// are readable returns its error without calling readable; one that fails
// after returns it too, and the pages stay readable.
func (c *Cache) PutReadable(key string, off int64, data []byte, readable func()) error {
	return c.put(key, off, data, readable, c.ps)
}

// FillFine is PutReadable for what a reader of scattered ranges fetched
// (the ranges MissingFine answered): a block it creates has pages of
// Config.FinePageSize, so that the cache holds exactly what was fetched,
// rounded to that size, and a column chunk of a Parquet file costs its own
// bytes from the bucket, not the whole pages around it. Into a block
// cached already, it puts pages of that block's size, as Put does
// (ErrInvalidRange if data is not aligned on them).
//
// NB: a block keeps the page size it was created with until it leaves the
// cache: fine pages cost a 16-byte record per 64 KiB in the sidecar and an
// entry each in the index, which a block read whole need not pay.
func (c *Cache) FillFine(key string, off int64, data []byte, readable func()) error {
	return c.put(key, off, data, readable, c.cfg.FinePageSize)
}

// put is Put with pages of ps bytes if it creates the block.
func (c *Cache) put(key string, off int64, data []byte, readable func(), ps int64) error {
	if err := validateKey(key); err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("%w: put at %d", ErrInvalidRange, off)
	}
	if len(data) == 0 {
		return nil
	}
	op, err := c.beginPut(key, off, data, ps)
	if err != nil {
		return err
	}
	return c.endPut(op, c.writePut(op, data, readable), readable)
}

// pageCount is the pages of ps bytes that n bytes take.
func pageCount(n, ps int64) int64 { return (n + ps - 1) / ps }

// pageLen is the length of page i of data put at page first, in pages of
// ps bytes.
func pageLen(data []byte, first, i, ps int64) int64 {
	return min(ps, int64(len(data))-(i-first)*ps)
}

// checkPut refuses a put at off that is not aligned on pages of ps bytes,
// or goes past the last page a block may have.
func checkPut(off int64, data []byte, ps int64) error {
	if off%ps != 0 {
		return fmt.Errorf("%w: put at %d, page size %d", ErrInvalidRange, off, ps)
	}
	if off/ps+pageCount(int64(len(data)), ps) > maxPages {
		return fmt.Errorf("%w: put beyond page %d", ErrInvalidRange, maxPages)
	}
	return nil
}

// beginPut marks the pages to write pending and reserves their space. A
// block it creates has pages of ps bytes.
func (c *Cache) beginPut(key string, off int64, data []byte, ps int64) (*putOp, error) {
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	b := c.mu.blocks[key]
	if b != nil {
		ps = b.ps
	}
	if err := checkPut(off, data, ps); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if b == nil {
		b = c.newBlockLocked(key, ps)
	}
	c.beginWriteLocked(b)
	first := off / ps
	err := c.checkShapeLocked(b, first, data)
	op := &putOp{b: b, first: first}
	var files []string
	if err == nil {
		c.claimPagesLocked(op, data)
		c.touchLocked(b, false)
		files, err = c.reserveLocked(b.dir, op.need)
		if err != nil {
			op.need = 0 // nothing was reserved
			c.releasePagesLocked(op)
		}
	}
	if err != nil {
		files = append(files, c.endWriteLocked(b)...)
	}
	c.mu.Unlock()
	c.removeFiles(files)
	return op, err
}

// checkShapeLocked refuses pages that contradict the block's shape (only
// the last page may be short) or the lengths of pages already there.
func (c *Cache) checkShapeLocked(b *block, first int64, data []byte) error {
	ps := b.ps
	last := first + pageCount(int64(len(data)), ps) - 1
	if top := b.lastPageLocked(); top >= 0 {
		topShort := int64(b.mu.pages[top].n) < ps
		if (topShort && last > top) || (pageLen(data, first, last, ps) < ps && top > last) {
			return fmt.Errorf("%w: pages %d-%d do not fit the block's end", ErrInvalidRange, first, last)
		}
	}
	for i := first; i <= last && i < int64(len(b.mu.pages)); i++ {
		if pg := b.mu.pages[i]; pg.state != absent && int64(pg.n) != pageLen(data, first, i, ps) {
			return fmt.Errorf("%w: page %d is %d bytes, not %d", ErrInvalidRange, i, pg.n, pageLen(data, first, i, ps))
		}
	}
	return nil
}

// claimPagesLocked marks the absent pages of data pending for op.
func (c *Cache) claimPagesLocked(op *putOp, data []byte) {
	b := op.b
	last := op.first + pageCount(int64(len(data)), b.ps) - 1
	for int64(len(b.mu.pages)) <= last {
		b.mu.pages = append(b.mu.pages, page{})
	}
	for i := op.first; i <= last; i++ {
		pg := &b.mu.pages[i]
		switch pg.state {
		case absent:
			n := pageLen(data, op.first, i, b.ps)
			*pg = page{n: uint32(n), state: pending}
			op.mine = append(op.mine, i)
			op.need += n
		case pending:
			op.others = append(op.others, i)
		}
	}
}

// releasePagesLocked gives up op's pages that were not published, and its
// reservation.
func (c *Cache) releasePagesLocked(op *putOp) {
	if !op.published && !op.b.mu.removed {
		for _, i := range op.mine {
			op.b.mu.pages[i] = page{}
		}
	}
	op.b.dir.mu.reserved -= op.need
	op.need = 0
	c.mu.changed.Broadcast()
}

// writePut writes op's pages, publishes them, and records them in the
// sidecar, evicting and retrying whenever the file system is out of space.
//
// NB: consecutive pages go in one write: the page cache sizes a file's
// folios by the writes that fill them, and only a 2 MiB folio, written by
// one call covering its aligned 2 MiB, can be mapped by one page-table
// entry. A short-circuit reader maps the file, and with 4 KiB entries it
// spends a quarter more CPU per byte (docs/benchmarks.md).
func (c *Cache) writePut(op *putOp, data []byte, readable func()) error {
	if len(op.mine) == 0 {
		// Pages an earlier Put could not record may be pending still.
		return c.retryNoSpace(op.b.dir, 0, func() error { return c.persist(op.b, nil) })
	}
	var f cachefs.File
	err := c.retryNoSpace(op.b.dir, op.need, func() (err error) {
		f, err = c.openData(op.b)
		return err
	})
	if err != nil {
		return err
	}
	defer f.Close()
	ps := op.b.ps
	for _, i := range op.mine {
		lo := (i - op.first) * ps
		op.crcs = append(op.crcs, chunkCRCs(data[lo:lo+pageLen(data, op.first, i, ps)], op.b.chunk))
	}
	for k := 0; k < len(op.mine); {
		run := k + 1 // op.mine[k:run] are consecutive pages
		for run < len(op.mine) && op.mine[run] == op.mine[run-1]+1 {
			run++
		}
		lo, last := (op.mine[k]-op.first)*ps, op.mine[run-1]
		p := data[lo : (last-op.first)*ps+pageLen(data, op.first, last, ps)]
		err := c.retryNoSpace(op.b.dir, op.need, func() error {
			_, err := f.WriteAt(p, op.mine[k]*ps)
			return err
		})
		if err != nil {
			return err
		}
		k = run
	}
	c.publish(op)
	if readable != nil && len(op.others) == 0 {
		readable()
		op.readable = true
	}
	return c.retryNoSpace(op.b.dir, 0, func() error { return c.persist(op.b, f) })
}

// openData opens b's data file for writing, creating it if need be.
func (c *Cache) openData(b *block) (cachefs.File, error) {
	return c.createFile(b.dataPath(), os.O_WRONLY|os.O_CREATE)
}

// createFile opens path with flag, which creates it, and creates its
// subdirectory first if need be.
func (c *Cache) createFile(path string, flag int) (cachefs.File, error) {
	f, err := c.fs.OpenFile(path, flag, fileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err = c.fs.MkdirAll(filepath.Dir(path), dirMode); err == nil {
			f, err = c.fs.OpenFile(path, flag, fileMode)
		}
	}
	return f, err
}

// publish makes op's written pages present, and queues their records.
func (c *Cache) publish(op *putOp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publishLocked(op)
}

func (c *Cache) publishLocked(op *putOp) {
	b := op.b
	if !b.mu.removed {
		for k, i := range op.mine {
			pg := &b.mu.pages[i]
			pg.crcs, pg.state = op.crcs[k], present
			b.mu.npresent++
			b.dir.mu.pages++
			addBytesLocked(b, int64(pg.n))
			c.filled.Add(uint64(pg.n))
			b.mu.pending = append(b.mu.pending, record{kind: recPresent, idx: uint32(i), n: pg.n, crcs: pg.crcs})
		}
	}
	op.published = true
	c.releasePagesLocked(op)
}

// endPut releases what beginPut took, waits for the pages other Puts were
// writing, calls readable if err is nil and it is still due, and returns
// err.
func (c *Cache) endPut(op *putOp, err error, readable func()) error {
	defer func() {
		if readable != nil && err == nil && !op.readable {
			readable()
		}
	}()
	c.mu.Lock()
	c.releasePagesLocked(op)
	for _, i := range op.others {
		for !op.b.mu.removed && op.b.mu.pages[i].state == pending {
			c.mu.changed.Wait()
		}
	}
	files := c.endWriteLocked(op.b)
	c.mu.Unlock()
	c.removeFiles(files)
	return err
}

// retryNoSpace runs fn, and while it fails for want of space, evicts from d
// and runs it again; this is the one place the cache retries. When nothing
// is left to evict it fails with ErrFull.
func (c *Cache) retryNoSpace(d *dirState, need int64, fn func() error) error {
	for {
		err := fn()
		if !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT) {
			return err
		}
		if !c.evictForSpace(d, need) {
			return fmt.Errorf("%w: %w", ErrFull, err)
		}
	}
}
