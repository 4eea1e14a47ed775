package localfs

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"unsafe"

	"github.com/stratafs/strata/internal/object"
)

// A Put of a large body writes its temp file past the page cache (O_DIRECT)
// where the file system allows: the bytes go from one reused buffer to the
// disk, and no page of the object is put into memory.
//
// Why (docs/datapath.md, "Where each byte goes"): a write into new pages of
// the page cache costs most of a put's CPU, ten times the read of the same
// bytes on the machines measured, since it is the first touch of memory the
// kernel just allocated (and that a VM's host may have to hand back first).
// The bucket's copy of a block is read rarely, and from the disk anyway once
// evicted, while the page cache's room is better spent on what is read: the
// worker's cache files. The fsync that follows has only the file's metadata
// to write, so the same disk bandwidth makes the put durable. A body read
// from a cache file (a short-circuit write's upload) thus crosses memory
// once, into the buffer, where its CRCs are taken.

// directMin is the smallest body written past the page cache: below it the
// buffered write and its fsync cost no more.
const directMin = 1 << 20

// directAlign is what O_DIRECT asks of offsets, lengths and buffer
// addresses: a multiple of the disk's logical block size, which 4 KiB is for
// every disk in use.
const directAlign = 4096

// directBuf is the size of one direct write, and directRead the most one
// read into the buffer asks for: the body's reader (a short-circuit upload's
// chunkSummer) checks what it read while it is still in the CPU's cache.
const (
	directBuf  = 4 << 20
	directRead = 1 << 20
)

// directBufs holds the aligned buffers of direct puts, reused so that their
// memory is touched once.
var directBufs = sync.Pool{New: func() any {
	b := make([]byte, directBuf+directAlign)
	off := directAlign - int(uintptr(unsafe.Pointer(&b[0]))%directAlign)
	if off == directAlign {
		off = 0
	}
	b = b[off : off+directBuf : off+directBuf]
	return &b
}}

// fillDirect fills f, a new empty temp file, with exactly size bytes of r,
// past the page cache where it can: whole aligned buffers by O_DIRECT, the
// unaligned tail (and everything, on a file system that refuses O_DIRECT)
// by ordinary writes.
func fillDirect(ctx context.Context, f *os.File, r io.Reader, size int64) error {
	direct := setDirect(f, true) == nil
	bp := directBufs.Get().(*[]byte)
	defer directBufs.Put(bp)
	buf := *bp
	src := &ctxReader{ctx: ctx, r: object.SizedReader(r, size)}
	for off := int64(0); off < size; {
		n := int(min(int64(len(buf)), size-off))
		if err := readPieces(src, buf[:n]); err != nil {
			return err
		}
		if err := writeDirect(f, buf[:n], off, &direct); err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// writeDirect writes p at off: its aligned part by O_DIRECT while *direct,
// the rest (the body's unaligned tail) by an ordinary write, after which
// *direct is false. A file system that accepts the flag and refuses the
// I/O gets ordinary writes from then on.
func writeDirect(f *os.File, p []byte, off int64, direct *bool) error {
	if *direct {
		whole := len(p) &^ (directAlign - 1)
		_, err := f.WriteAt(p[:whole], off)
		switch {
		case err == nil:
			p, off = p[whole:], off+int64(whole)
		case !errors.Is(err, errDirectRefused):
			return err
		}
		if len(p) == 0 {
			return nil
		}
		*direct = false
		if err := setDirect(f, false); err != nil {
			return err
		}
	}
	_, err := f.WriteAt(p, off)
	return err
}

// readPieces fills p from r, directRead bytes at a time at most. r is a
// sized reader (object.SizedReader), which fails a body that ends early or
// holds more than its size, before it hands out the last byte.
func readPieces(r io.Reader, p []byte) error {
	for len(p) > 0 {
		n, err := io.ReadFull(r, p[:min(len(p), directRead)])
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}
