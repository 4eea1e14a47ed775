package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"

	"github.com/stratafs/strata/internal/cache/cachefs"
	"github.com/stratafs/strata/internal/crc32c"
)

// span is one cached page a read needs.
type span struct {
	idx  int64
	n    int64
	crcs []uint32 // by chunk
}

// view is what a read found in the index: the pages to read and what to
// recognise a race with a drop or an eviction by.
type view struct {
	b     *block
	drops uint64
	chunk int64 // the block's bytes per CRC
	spans []span
	eof   bool // the range goes past the block's end
}

// lookup finds the pages of [off, off+length) of key, all present, and
// counts the use of the block. The range is cut at the block's end if that
// is known (a short last page); past the end, the view has no pages and eof.
func (c *Cache) lookup(key string, off, length int64) (view, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return view{}, ErrClosed
	}
	b := c.mu.blocks[key]
	if b == nil {
		return view{}, ErrMiss
	}
	v := view{b: b, drops: b.mu.drops, chunk: b.chunk}
	ps := b.ps
	first, last := off/ps, (off+length-1)/ps
	if e := b.eofLocked(); e >= 0 && (first > e || off >= e*ps+int64(b.mu.pages[e].n)) {
		v.eof = true
		return v, nil
	}
	for i := first; i <= last; i++ {
		if i >= int64(len(b.mu.pages)) || b.mu.pages[i].state != present {
			return view{}, ErrMiss
		}
		pg := b.mu.pages[i]
		v.spans = append(v.spans, span{idx: i, n: int64(pg.n), crcs: pg.crcs})
		if int64(pg.n) < ps {
			v.eof = off+length > i*ps+int64(pg.n)
			break
		}
	}
	c.touchLocked(b, true)
	return v, nil
}

// count counts a ReadAt or Acquire call as a hit or a miss.
func (c *Cache) count(err error) {
	switch {
	case err == nil || err == io.EOF:
		c.hits.Add(1)
	case errors.Is(err, ErrMiss), errors.Is(err, ErrCorrupt):
		c.misses.Add(1)
	}
}

// ReadAt reads len(p) bytes of block key at off. Every page the range
// touches must be cached, or it fails with ErrMiss; every chunk of them it
// touches is checked against its CRC, and a page with a chunk that fails is
// dropped from the cache and the call fails with ErrCorrupt. On error nothing is returned (n is 0; p's
// contents are unspecified). A range past the end of a block whose last
// (short) page is cached returns what there is with io.EOF; past the end of
// a block whose end is not known, it misses.
func (c *Cache) ReadAt(key string, p []byte, off int64) (int, error) {
	if err := validateKey(key); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := checkRange(off, int64(len(p))); err != nil {
		return 0, err
	}
	v, err := c.lookup(key, off, int64(len(p)))
	n := 0
	if err == nil {
		n, err = c.readView(v, p, off)
	}
	c.count(err)
	return n, err
}

// readView reads the pages of v into p, which is the range at off.
func (c *Cache) readView(v view, p []byte, off int64) (int, error) {
	if len(v.spans) == 0 {
		return 0, io.EOF
	}
	f, err := c.fs.OpenFile(v.b.dataPath(), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrMiss // evicted since the lookup
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	end := off + int64(len(p))
	ps := v.b.ps
	for _, s := range v.spans {
		start := s.idx * ps
		lo, hi := max(off, start), min(end, start+s.n)
		// The chunks [lo, hi) touches: [clo, chi).
		clo, chi := lo-(lo-start)%v.chunk, min(hi+(v.chunk-(hi-start)%v.chunk)%v.chunk, start+s.n)
		if lo == clo && hi == chi {
			err = c.readChunks(f, ps, s, v.chunk, p[lo-off:hi-off], lo-start)
		} else {
			err = c.readPartial(f, ps, s, v.chunk, p[lo-off:hi-off], clo-start, chi-start, lo-clo)
		}
		if err != nil {
			return 0, c.confirmCorrupt(v, s, err)
		}
	}
	last := v.spans[len(v.spans)-1]
	n := min(end, last.idx*ps+last.n) - off
	if v.eof {
		return int(n), io.EOF
	}
	return int(n), nil
}

// errBadPage is a page that could not be read whole or failed its CRC.
var errBadPage = errors.New("page failed its check")

// readChunks reads the whole chunks of page s (of a block with pages of ps
// bytes) at byte at of it into dst and checks them.
func (c *Cache) readChunks(f cachefs.File, ps int64, s span, chunk int64, dst []byte, at int64) error {
	if _, err := f.ReadAt(dst, s.idx*ps+at); err != nil {
		return fmt.Errorf("%w: %w", errBadPage, err)
	}
	for i := int64(0); i < int64(len(dst)); i += chunk {
		if Checksum(dst[i:min(i+chunk, int64(len(dst)))]) != s.crcs[(at+i)/chunk] {
			return errBadPage
		}
	}
	return nil
}

// readPartial reads the chunks [from, to) of page s into a buffer, checks
// them, and copies the bytes from skip on into dst.
//
// NB: the pool's buffers are of Config.PageSize, the largest page a block
// has (Open discards sidecars of other sizes).
func (c *Cache) readPartial(f cachefs.File, ps int64, s span, chunk int64, dst []byte, from, to, skip int64) error {
	bp := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(bp)
	buf := (*bp)[:to-from]
	if err := c.readChunks(f, ps, s, chunk, buf, from); err != nil {
		return err
	}
	copy(dst, buf[skip:])
	return nil
}

// confirmCorrupt decides what a page that failed its check means. If the
// block and the page are as the lookup saw them, the cached copy is bad:
// the page is dropped and the answer is ErrCorrupt. If the page was dropped
// or the block evicted meanwhile, the read raced that and merely missed.
// Errors other than a bad page are returned as they are.
func (c *Cache) confirmCorrupt(v view, s span, err error) error {
	if !errors.Is(err, errBadPage) {
		return err
	}
	b := v.b
	c.mu.Lock()
	if b.mu.removed || b.mu.drops != v.drops {
		c.mu.Unlock()
		return ErrMiss
	}
	c.dropPageLocked(b, s.idx)
	files, record := c.settleLocked(b)
	c.mu.Unlock()
	c.corruptions.Add(1)
	c.removeFiles(files)
	if record {
		c.persistPending(b)
	}
	return fmt.Errorf("%w: %s page %d: %w", ErrCorrupt, b.key, s.idx, err)
}

// Handle lends the data file of a cached block to a reader, typically
// another process on the host that the worker passes File's descriptor to
// (short-circuit). The range's pages start at FirstPage in the file; each
// is cut into chunks of ChunkSize bytes, and chunk i of the range is at
// FirstPage + i*ChunkSize, ChunkSize bytes long except the last, which ends
// at FirstPage + Length, and must match CRCs[i] (CRC32C, see Checksum);
// ReadChunk does exactly that. The bytes stay readable until Release, even
// if the block is evicted meanwhile (the file is unlinked, not changed). A
// reader that finds a chunk failing its CRC must not use it and should
// call Invalidate.
type Handle struct {
	File      cachefs.File // open read-only
	Path      string       // the file's path, for readers who see it; gone once evicted, unlike File
	PageSize  int64
	ChunkSize int64 // divides PageSize: the block's chunk (see Config.ChunkSize)
	FirstPage int64 // file offset of the range's first page (a multiple of PageSize)
	Length    int64 // bytes from FirstPage to the end of the range's last page
	CRCs      []uint32

	once sync.Once
}

// Acquire returns a Handle on the pages of [off, off+length) of key if all
// of them are cached, ErrMiss otherwise; io.EOF if off is past the end of
// the block (known from its short last page), where the range is also cut.
// The caller must Release the handle.
func (c *Cache) Acquire(key string, off, length int64) (*Handle, error) {
	if err := validateKey(key); err != nil {
		return nil, err
	}
	if err := checkRange(off, length); err != nil {
		return nil, err
	}
	v, err := c.lookup(key, off, length)
	if err == nil && len(v.spans) == 0 {
		err = io.EOF
	}
	var h *Handle
	if err == nil {
		h, err = c.newHandle(v)
	}
	c.count(err)
	return h, err
}

func (c *Cache) newHandle(v view) (*Handle, error) {
	f, err := c.fs.OpenFile(v.b.dataPath(), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss // evicted since the lookup
	}
	if err != nil {
		return nil, err
	}
	first, last, ps := v.spans[0], v.spans[len(v.spans)-1], v.b.ps
	h := &Handle{File: f, Path: v.b.dataPath(), PageSize: ps, ChunkSize: v.chunk, FirstPage: first.idx * ps,
		Length: (last.idx-first.idx)*ps + last.n}
	h.CRCs = make([]uint32, 0, (h.Length+v.chunk-1)/v.chunk)
	for _, s := range v.spans {
		h.CRCs = append(h.CRCs, s.crcs...)
	}
	return h, nil
}

// Release closes the handle's file. It may be called more than once.
func (h *Handle) Release() {
	h.once.Do(func() { _ = h.File.Close() })
}

// ChunkSpan returns the file offset and length of the handle's chunk i.
func (h *Handle) ChunkSpan(i int) (off, n int64) {
	off = h.FirstPage + int64(i)*h.ChunkSize
	return off, min(h.ChunkSize, h.FirstPage+h.Length-off)
}

// ReadChunk reads the handle's chunk i into buf (grown if short) and checks
// its CRC, as a short-circuit reader must; a chunk failing it is
// ErrCorrupt.
func (h *Handle) ReadChunk(i int, buf []byte) ([]byte, error) {
	off, n := h.ChunkSpan(i)
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := h.File.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("%w: chunk at %d: %w", ErrCorrupt, off, err)
	}
	if Checksum(buf) != h.CRCs[i] {
		return nil, fmt.Errorf("%w: chunk at %d fails its CRC", ErrCorrupt, off)
	}
	return buf, nil
}

// PageCRCs returns the CRC32C of each whole page of the range, combined
// from its chunks' CRCs (no page is read): what a reader that checks
// whole pages needs.
func (h *Handle) PageCRCs() []uint32 {
	if h.ChunkSize == h.PageSize {
		return h.CRCs
	}
	per := int(h.PageSize / h.ChunkSize)
	whole := crc32c.CombinerFor(h.ChunkSize)
	out := make([]uint32, 0, (len(h.CRCs)+per-1)/per)
	for i := 0; i < len(h.CRCs); i += per {
		crc := h.CRCs[i]
		for j := i + 1; j < min(i+per, len(h.CRCs)); j++ {
			k := whole
			if _, n := h.ChunkSpan(j); n != h.ChunkSize { // the block's last chunk
				k = crc32c.CombinerFor(n)
			}
			crc = k.Combine(crc, h.CRCs[j])
		}
		out = append(out, crc)
	}
	return out
}

// Range is a byte range of a block.
type Range struct{ Off, Len int64 }

// Missing returns the page-aligned ranges of [off, off+length) of key that
// are not cached (pages being written count as missing), in order, adjacent
// pages merged. Ranges may run past the end of the block, unless the block's
// end is known from its short last page; the caller cuts them at the block's
// size. An invalid key or a closed cache has everything missing. The pages
// are the block's, or, for a block not cached, of Config.PageSize.
func (c *Cache) Missing(key string, off, length int64) []Range {
	return c.missing(key, off, length, c.ps)
}

// MissingFine is Missing for a reader of scattered ranges: a block not
// cached yet counts in pages of Config.FinePageSize, the pages FillFine
// gives it, so that what is fetched is the range rounded to that size, not
// to a whole page.
func (c *Cache) MissingFine(key string, off, length int64) []Range {
	return c.missing(key, off, length, c.cfg.FinePageSize)
}

func (c *Cache) missing(key string, off, length, ps int64) []Range {
	if checkRange(off, length) != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var pages []page
	var b *block
	if validateKey(key) == nil && !c.mu.closed {
		if b = c.mu.blocks[key]; b != nil {
			pages, ps = b.mu.pages, b.ps
		}
	}
	first, last := off/ps, (off+length-1)/ps
	if b != nil {
		if e := b.eofLocked(); e >= 0 {
			last = min(last, e)
		}
	}
	var out []Range
	add := func(from, to int64) { // pages [from, to]
		if k := len(out) - 1; k >= 0 && out[k].Off+out[k].Len == from*ps {
			out[k].Len += (to - from + 1) * ps
		} else {
			out = append(out, Range{Off: from * ps, Len: (to - from + 1) * ps})
		}
	}
	for i := first; i <= last && i < int64(len(pages)); i++ {
		if pages[i].state != present {
			add(i, i)
		}
	}
	if from := max(first, int64(len(pages))); from <= last {
		add(from, last)
	}
	return out
}

// checkRange refuses negative offsets, empty or negative lengths, and
// ranges whose end overflows.
func checkRange(off, length int64) error {
	if off < 0 || length <= 0 || length > math.MaxInt64-off {
		return fmt.Errorf("%w: %d+%d", ErrInvalidRange, off, length)
	}
	return nil
}
