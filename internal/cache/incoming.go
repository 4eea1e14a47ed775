package cache

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// Incoming is a new block whose bytes a writer outside the cache puts into
// its data file itself (a short-circuit write: the worker hands the file to
// a client on its host), and which Commit then makes cached. Until then the
// block is not in the index: no reader can see it, and a crash leaves a
// data file without a sidecar, which Open deletes.
//
// Not safe for concurrent use; Commit or Abort ends it.
type Incoming struct {
	c    *Cache
	key  string
	d    *dirState
	gen  uint64
	max  int64 // bytes reserved, the most the block may hold
	done bool

	// File is the data file, open for reading and writing.
	File cachefs.File
	// Path is the data file's path, for writers that open it themselves.
	Path string
}

// ErrExists is returned by Create and Commit for a block the cache holds
// already.
var ErrExists = errors.New("cache: block exists")

// Create starts block key as an empty data file for a writer to fill with
// at most max bytes from offset 0. It reserves max bytes of the directory
// (evicting as Put does) and allocates them on the disk, so that the
// writer's writes cannot fail for want of space; ErrFull if they cannot be
// had.
func (c *Cache) Create(key string, max int64) (*Incoming, error) {
	if err := validateKey(key); err != nil {
		return nil, err
	}
	if max <= 0 || pageCount(max, c.ps) > maxPages {
		return nil, fmt.Errorf("%w: a block of up to %d bytes", ErrInvalidRange, max)
	}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.mu.blocks[key] != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrExists, key)
	}
	d := c.pickDir(key)
	in := &Incoming{c: c, key: key, d: d, gen: c.mu.nextGen, max: max}
	c.mu.nextGen++
	files, err := c.reserveLocked(d, max)
	c.mu.Unlock()
	c.removeFiles(files)
	if err != nil {
		return nil, err
	}
	in.Path = blockBase(d.root, key, in.gen) + ".data"
	err = c.retryNoSpace(d, max, func() error {
		if in.File == nil {
			f, err := c.createFile(in.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
			if err != nil {
				return err
			}
			in.File = f
		}
		// The file's size stays what the writer writes, which the worker
		// checks; Commit cuts off what is left of the allocation.
		return in.File.Allocate(max)
	})
	if err != nil {
		in.Abort()
		return nil, err
	}
	return in, nil
}

// Size returns the bytes the writer has put into the file so far.
func (in *Incoming) Size() (int64, error) {
	fi, err := in.File.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// ChunkSize is the bytes per CRC the block is checksummed by: Commit takes
// one CRC32C per chunk.
func (in *Incoming) ChunkSize() int64 { return in.c.cfg.ChunkSize }

// Commit makes the block cached as the first length bytes of its data file,
// which must be exactly that long, with crcs the CRC32C of each chunk of
// them (ChunkSize). The pages are readable when it returns, and durable in
// the sidecar unless it fails after that (the pages stay cached then, as
// after a Put that could not record them).
func (in *Incoming) Commit(length int64, crcs []uint32) error {
	if in.done {
		return errors.New("cache: incoming block ended already")
	}
	c, chunk := in.c, in.c.cfg.ChunkSize
	if length <= 0 || length > in.max || int64(len(crcs)) != (length+chunk-1)/chunk {
		in.Abort()
		return fmt.Errorf("%w: %d bytes with %d CRCs, of at most %d", ErrInvalidRange, length, len(crcs), in.max)
	}
	// Free what the allocation left past the block's end.
	if err := in.File.Truncate(length); err != nil {
		in.Abort()
		return err
	}
	c.mu.Lock()
	if c.mu.closed || c.mu.blocks[in.key] != nil {
		closed := c.mu.closed
		c.mu.Unlock()
		in.Abort()
		if closed {
			return ErrClosed
		}
		return fmt.Errorf("%w: %s", ErrExists, in.key)
	}
	// The pages go in pending, and are published as a Put's are, which
	// gives the reservation back.
	b := c.addNewBlockLocked(in.key, in.d, in.gen, c.ps)
	op := &putOp{b: b, need: in.max}
	perPage := c.ps / chunk
	for i := int64(0); i < pageCount(length, c.ps); i++ {
		b.mu.pages = append(b.mu.pages, page{n: uint32(min(c.ps, length-i*c.ps)), state: pending})
		op.mine = append(op.mine, i)
		op.crcs = append(op.crcs, crcs[i*perPage:min(int64(len(crcs)), (i+1)*perPage)])
	}
	c.publishLocked(op)
	c.beginWriteLocked(b)
	c.mu.Unlock()
	in.done = true
	err := c.retryNoSpace(b.dir, 0, func() error { return c.persist(b, in.File) })
	in.File.Close()
	c.endWrite(b)
	return err
}

// Abort gives the block up: its file goes, and its reservation. It does
// nothing after Commit or Abort.
func (in *Incoming) Abort() {
	if in.done {
		return
	}
	in.done = true
	c := in.c
	c.mu.Lock()
	in.d.mu.reserved -= in.max
	c.mu.changed.Broadcast()
	c.mu.Unlock()
	if in.File != nil {
		in.File.Close()
	}
	c.removeFiles([]string{in.Path})
}
