package client

import (
	"os"
	"sort"
	"syscall"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/trace"
)

// Lent is a short-circuit lease handed on: a range of a block's cache
// file that the worker on this host lent, for a reader in another process
// of this host to read itself (the Python package's agent passes File to
// the process it serves). The reader must do what a lease here does
// (sclease.go): check every unit it reads against its CRC, look at the
// file at least every LinkCheckEvery (a file with no link left was evicted:
// stop), and stop after TTL; after any of these it reads through this
// client instead, which asks the worker again.
type Lent struct {
	File  *os.File // a descriptor of its own, the caller's to close
	Start int64    // the file's (Strata's) offset of the block's first byte: the cache file's offset 0
	First int64    // the block's bytes [First, End) are lent
	End   int64
	Unit  int64    // bytes per CRC, from First on
	CRCs  []uint32 // CRC32C (Castagnoli) of each unit of [First, End)
}

// LinkCheckEvery and TTL are what a holder of a Lent must honour (linkCheckEvery, leaseTTL).
var (
	LinkCheckEvery = linkCheckEvery
	TTL            = leaseTTL
)

// Lend returns a lease covering [off, off+n) of the file, or as much of it
// as the block holding off holds, from the worker on this host that is the
// block's first choice; random says the reader reads here and there (else
// the worker reads on ahead, as for Read). It fails with
// fserr.ErrUnsupported when there is none (no worker on this host,
// short-circuit off, or the bytes are not in a block: inline, or a flushed
// tail): the caller then reads with ReadAt.
func (r *Reader) Lend(off, n int64, random bool) (*Lent, error) {
	if off < 0 || off >= r.tailStart || r.inline != nil || len(r.blocks) == 0 {
		return nil, fserr.Errorf(fserr.ErrUnsupported, "lend %s: the bytes at %d are not in a block", r.Status.Path, off)
	}
	i := sort.Search(len(r.blocks), func(i int) bool { return int64(r.blocks[i].Offset+r.blocks[i].Length) > off })
	b := r.blocks[i]
	in := off - int64(b.Offset)
	n = min(n, int64(b.Length)-in)
	ref := r.blockRef(b)
	list, err := r.c.workers.live(r.ctx, false)
	if err != nil {
		return nil, err
	}
	ranked := rank(list, ref.InodeId, ref.BlockId)
	if len(ranked) == 0 || !r.c.workers.local(ranked[0]) {
		return nil, fserr.Errorf(fserr.ErrUnsupported, "lend %s: no worker on this host holds block %016x", r.Status.Path, b.BlockId)
	}
	p := r.c.workers.scPool(ranked[0].UnixSocket)
	l := p.leases.get(keyOf(ref), in, n)
	fresh := l == nil
	if fresh {
		if l, err = p.lend(ref, in, n, false, random, trace.FromContext(r.ctx)); err != nil {
			return nil, err
		}
		defer l.close()
	}
	f, err := dupFile(l.f)
	if err != nil {
		return nil, err
	}
	return &Lent{File: f, Start: int64(b.Offset), First: l.first, End: l.end, Unit: l.unit,
		CRCs: append([]uint32(nil), l.crcs...)}, nil
}

// dupFile returns a descriptor of its own of f's file. NB: through
// SyscallConn, so that a concurrent close of f (a lease ending) cannot
// have the number reused under the dup.
func dupFile(f *os.File) (*os.File, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := raw.Control(func(old uintptr) { fd, derr = syscall.Dup(int(old)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}
