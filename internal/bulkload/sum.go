package bulkload

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/fspath"
)

// sum finds the directories the root reaches, with their depths and path
// lengths, and adds each one's direct sums to itself and every directory
// above it.
func (b *builder) sum() error {
	b.reach = newBitset(b.n)
	known := newBitset(b.n)
	b.reach.set(b.root)
	known.set(b.root)
	var chain []uint64
	err := b.eachDir(func(s, r uint64) error {
		// Up to a directory known, then down the chain again.
		chain = chain[:0]
		x := r
		for !known.has(x) {
			chain = append(chain, x)
			if len(chain) > fspath.MaxDepth+1 {
				return fmt.Errorf("%w: inode at rank %d: a cycle, or a path deeper than %d", ErrInvalid, r, fspath.MaxDepth)
			}
			p := b.parent[x]
			if p == 0 {
				break
			}
			x = uint64(p - 1)
		}
		reached := known.has(x) && b.reach.has(x)
		for i := len(chain) - 1; i >= 0; i-- {
			c := chain[i]
			known.set(c)
			if !reached {
				continue
			}
			b.reach.set(c)
			if err := b.place(c); err != nil {
				return err
			}
		}
		if s%(1<<14) == 0 {
			b.progress("sums", s, b.dirs.n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.sumUp()
	// Files and links are reached when their directory is.
	for r := uint64(0); r < b.n; r++ {
		if p := b.parent[r]; p != 0 && b.reach.has(uint64(p-1)) {
			b.reach.set(r)
		}
	}
	return nil
}

// eachDir calls fn with every directory's slot and rank, in order.
func (b *builder) eachDir(fn func(s, r uint64) error) error {
	s := uint64(0)
	for i, w := range b.dirs.set {
		for ; w != 0; w &= w - 1 {
			if err := fn(s, uint64(i)*64+uint64(bits.TrailingZeros64(w))); err != nil {
				return err
			}
			s++
		}
	}
	return nil
}

// place sets a reached directory's depth and path length from its
// parent's, and checks them against Strata's limits.
func (b *builder) place(r uint64) error {
	s, _ := b.dirs.rank(r)
	a := &b.agg[s]
	p := b.parent[r]
	if p == 0 {
		return nil // the root
	}
	ps, _ := b.dirs.rank(uint64(p - 1))
	pa := &b.agg[ps]
	a.depth = pa.depth + 1
	a.pathLen = pa.pathLen + 1 + uint32(len(b.sc.name(b.off[r]-1)))
	if a.depth > fspath.MaxDepth || a.pathLen > fspath.MaxPathLen {
		return fmt.Errorf("%w: %s: a path of %d bytes and %d components, where Strata takes %d and %d",
			ErrInvalid, b.path(r), a.pathLen, a.depth, fspath.MaxPathLen, fspath.MaxDepth)
	}
	return nil
}

// sumUp adds each reached directory's direct sums to its own and its
// ancestors' subtree sums.
func (b *builder) sumUp() {
	_ = b.eachDir(func(s, r uint64) error {
		if !b.reach.has(r) {
			return nil
		}
		d := b.agg[s]
		for x := r; ; {
			xs, _ := b.dirs.rank(x)
			a := &b.agg[xs]
			a.subFiles += d.files
			a.subDirs += d.dirs
			a.subLen += d.bytes
			p := b.parent[x]
			if p == 0 {
				break
			}
			x = uint64(p - 1)
		}
		return nil
	})
}

// path returns the path of the inode of rank r, for messages.
func (b *builder) path(r uint64) string {
	var parts []string
	for x := r; x != b.root; {
		parts = append(parts, string(b.sc.name(b.off[x]-1)))
		p := b.parent[x]
		if p == 0 {
			break
		}
		x = uint64(p - 1)
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/")
}
