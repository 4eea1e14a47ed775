package bulkload

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/fsimage"
	"github.com/stratafs/strata/internal/fspath"
)

// Options say what to build and where.
type Options struct {
	// Dir is the work directory: the tables, the manifest and the scratch
	// file go there. A build finds there what an earlier one of the same
	// source and options left, and goes on from it.
	Dir string
	// Key names the source (its path, size and time, say): a work
	// directory of another source is refused, not resumed.
	Key string
	// Base is the first id of the range reserved for the tree: the inode
	// of rank r gets Base+r. The range must hold Count(src) ids.
	Base uint64
	// TableBytes is the size at which a table is closed and the next one
	// begun (default 256 MiB).
	TableBytes uint64
	// DataMissing lists, in Dir/unreachable.txt, every file with bytes:
	// the namespace gets their metadata only.
	DataMissing bool
	// Replication is the HDFS cluster's default replication (its
	// dfs.replication; 0: HDFS's default, 3), which a space quota is
	// divided by: HDFS charges bytes times replication, Strata counts them
	// once. An image does not record it.
	Replication uint32
	// Progress, if set, is told how each phase goes, now and then.
	Progress func(Progress)
	// OnTable, if set, is given each table once it is whole: those a
	// build resumes from first, then each as it is written, so that its
	// caller can ship it while the next is built.
	OnTable func(Table)
}

// Progress is how far a build is.
type Progress struct {
	Phase       string
	Done, Total uint64
}

// Result is what a build made.
type Result struct {
	// Tables are the files to ingest, in Dir, in key order.
	Tables []Table
	// Root is the id of the tree's root.
	Root uint64
	// Files, Dirs and Bytes count what the tables hold (the root is one of
	// the directories).
	Files, Dirs, Bytes uint64
	// Left out: symbolic links (which Strata does not have), and the
	// inodes only snapshots see.
	Symlinks, SnapshotOnly uint64
	// UnderConstruction counts the files that were open for writing:
	// they come in closed, at the length their blocks had.
	UnderConstruction uint64
	// SpaceQuotas counts the directories with a space quota, each divided
	// by Replication, the default replication it was taken to be.
	SpaceQuotas uint64
	Replication uint32
	// Unreachable counts the files whose bytes the namespace cannot
	// read (listed in UnreachableList when Options.DataMissing).
	Unreachable     uint64
	UnreachableList string
}

// DefaultReplication is HDFS's dfs.replication when a cluster does not set it.
const DefaultReplication = 3

func (o *Options) replication() uint32 {
	if o.Replication == 0 {
		return DefaultReplication
	}
	return o.Replication
}

// Count returns how many ids a build of src uses: the range to reserve.
func Count(src fsimage.Source) uint64 { return src.Count() }

// ErrInvalid is a tree that cannot be imported as it is: a name Strata
// cannot hold, a path too long or deep, two entries of one name.
var ErrInvalid = errors.New("bulkload: the tree cannot be imported")

// Build builds the tables of src's tree in o.Dir.
func Build(src fsimage.Source, o Options) (*Result, error) {
	if o.TableBytes == 0 {
		o.TableBytes = 256 << 20
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	m, err := loadManifest(o)
	if err != nil {
		return nil, err
	}
	b := &builder{o: o, src: src, m: m, users: names{index: map[string]uint32{}}}
	defer b.close()
	if o.OnTable != nil {
		for _, t := range m.Tables {
			o.OnTable(t)
		}
	}
	if err := b.index(); err != nil {
		return nil, err
	}
	if err := b.link(); err != nil {
		return nil, err
	}
	if err := b.read(); err != nil {
		return nil, err
	}
	if err := b.sum(); err != nil {
		return nil, err
	}
	if err := b.emit(); err != nil {
		return nil, err
	}
	return b.result()
}

// builder is one build's state. Inodes are numbered by rank (0..n-1);
// directories also by slot (their rank among directories).
type builder struct {
	o   Options
	src fsimage.Source
	m   *manifest

	n      uint64
	root   uint64 // the root's rank
	ids    *ranks // source id → rank
	dirs   *ranks // rank → slot, over the directories
	links  bitset // by rank: symbolic links
	parent []uint32
	off    []uint64 // by rank: the record's offset in scratch, +1
	sc     *scratch
	users  names

	kidStart []uint32 // by slot: where its children start in kids
	kids     []uint32 // ranks, grouped by parent slot
	agg      []dirAgg // by slot
	reach    bitset   // by rank: the root reaches it
	res      Result
}

// dirAgg is a directory's sums: what it holds directly, then (sub) what
// its whole subtree holds, and the length of its path.
type dirAgg struct {
	children                  uint64
	files, dirs, bytes        uint64
	subFiles, subDirs, subLen uint64
	depth, pathLen            uint32
}

// names interns the users' and groups' names.
type names struct {
	index map[string]uint32
	list  []string
}

func (n *names) id(s string) uint32 {
	if i, ok := n.index[s]; ok {
		return i
	}
	i := uint32(len(n.list))
	n.index[s] = i
	n.list = append(n.list, s)
	return i
}

func (b *builder) close() {
	if b.sc != nil {
		b.sc.close()
		os.Remove(b.sc.f.Name())
	}
}

func (b *builder) progress(phase string, done, total uint64) {
	if b.o.Progress != nil {
		b.o.Progress(Progress{Phase: phase, Done: done, Total: total})
	}
}

// maxSpread bounds the span of a source's ids against their number: a
// bitmap over the span costs a bit an id.
const maxSpread = 64

// index is the first pass: every id, its rank, and which are directories
// and links.
func (b *builder) index() error {
	count := b.src.Count()
	lo, hi := b.src.Span()
	if count == 0 || hi < lo {
		return fmt.Errorf("%w: the image has no inodes", ErrInvalid)
	}
	if count >= math.MaxUint32 {
		return fmt.Errorf("%w: %d inodes, more than a build takes (%d)", ErrInvalid, count, uint64(math.MaxUint32-1))
	}
	span := hi - lo + 1
	if span/maxSpread > count && span > 1<<26 {
		return fmt.Errorf("%w: ids from %d to %d for %d inodes", ErrInvalid, lo, hi, count)
	}
	b.n = count
	b.ids = newRanks(lo, span)
	isDir, isLink := newBitset(span), newBitset(span)
	seen := uint64(0)
	err := b.src.IDs(func(id uint64, t fsimage.Type) error {
		if !b.ids.add(id) {
			return fmt.Errorf("%w: inode %d is listed twice, or outside the ids %d-%d", fsimage.ErrCorrupt, id, lo, hi)
		}
		switch t {
		case fsimage.Dir:
			isDir.set(id - lo)
		case fsimage.Symlink:
			isLink.set(id - lo)
		}
		seen++
		if seen%(1<<16) == 0 {
			b.progress("ids", seen, count)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if seen != count {
		return fmt.Errorf("%w: the image says %d inodes and lists %d", fsimage.ErrCorrupt, count, seen)
	}
	b.ids.seal()
	root, ok := b.ids.rank(b.src.Root())
	if !ok || !isDir.has(b.src.Root()-lo) {
		return fmt.Errorf("%w: no root directory (inode %d)", fsimage.ErrCorrupt, b.src.Root())
	}
	b.root = root
	// Directories and links by rank.
	b.dirs = newRanks(0, count)
	b.links = newBitset(count)
	r := uint64(0)
	for i, w := range b.ids.set {
		for ; w != 0; w &= w - 1 {
			bit := uint64(i)*64 + uint64(bits.TrailingZeros64(w))
			if isDir.has(bit) {
				b.dirs.add(r)
			} else if isLink.has(bit) {
				b.links.set(r)
			}
			r++
		}
	}
	b.dirs.seal()
	b.agg = make([]dirAgg, b.dirs.n)
	b.progress("ids", count, count)
	return nil
}

// rankOf returns id's rank, or an error naming it.
func (b *builder) rankOf(id uint64, what string) (uint64, error) {
	r, ok := b.ids.rank(id)
	if !ok {
		return 0, fmt.Errorf("%w: %s %d is not an inode of the image", fsimage.ErrCorrupt, what, id)
	}
	return r, nil
}

// link is the second pass: each inode's parent, and each directory's
// children grouped.
func (b *builder) link() error {
	b.parent = make([]uint32, b.n)
	linked := uint64(0)
	err := b.src.Children(func(p uint64, kids []uint64) error {
		pr, err := b.rankOf(p, "directory")
		if err != nil {
			return err
		}
		if _, isDir := b.dirs.rank(pr); !isDir {
			return fmt.Errorf("%w: inode %d has children but is not a directory", fsimage.ErrCorrupt, p)
		}
		for _, k := range kids {
			kr, err := b.rankOf(k, "child")
			if err != nil {
				return err
			}
			if b.parent[kr] != 0 || kr == b.root {
				return fmt.Errorf("%w: inode %d is a child twice", fsimage.ErrCorrupt, k)
			}
			b.parent[kr] = uint32(pr) + 1
		}
		linked += uint64(len(kids))
		if linked%(1<<16) < uint64(len(kids)) {
			b.progress("children", linked, b.n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.group()
	return nil
}

// group lists each directory's children together (a counting sort of the
// parents).
func (b *builder) group() {
	b.kidStart = make([]uint32, b.dirs.n+1)
	for _, p := range b.parent {
		if p != 0 {
			s, _ := b.dirs.rank(uint64(p - 1))
			b.kidStart[s+1]++
		}
	}
	for s := 1; s < len(b.kidStart); s++ {
		b.kidStart[s] += b.kidStart[s-1]
	}
	next := append([]uint32(nil), b.kidStart[:b.dirs.n]...)
	b.kids = make([]uint32, b.kidStart[b.dirs.n])
	for r, p := range b.parent {
		if p != 0 {
			s, _ := b.dirs.rank(uint64(p - 1))
			b.kids[next[s]] = uint32(r)
			next[s]++
		}
	}
}

// read is the third pass: each inode's attributes into the scratch file,
// and what it adds to its directory.
func (b *builder) read() error {
	sc, err := newScratch(filepath.Join(b.o.Dir, "inodes.scratch"))
	if err != nil {
		return err
	}
	b.sc = sc
	b.off = make([]uint64, b.n)
	done := uint64(0)
	err = b.src.Entries(func(e *fsimage.Entry) error {
		r, err := b.rankOf(e.ID, "inode")
		if err != nil {
			return err
		}
		if b.off[r] != 0 {
			return fmt.Errorf("%w: inode %d is listed twice", fsimage.ErrCorrupt, e.ID)
		}
		if err := b.check(r, e); err != nil {
			return err
		}
		off, err := b.sc.add(e, b.users.id(e.User), b.users.id(e.Group))
		if err != nil {
			return err
		}
		b.off[r] = off + 1
		b.count(r, e)
		done++
		if done%(1<<16) == 0 {
			b.progress("inodes", done, b.n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if done != b.n {
		return fmt.Errorf("%w: %d inodes in the first pass, %d in the last", fsimage.ErrCorrupt, b.n, done)
	}
	return b.sc.seal()
}

// check checks an entry against the first pass and Strata's rules.
func (b *builder) check(r uint64, e *fsimage.Entry) error {
	_, isDir := b.dirs.rank(r)
	if isDir != e.IsDir() || b.links.has(r) != (e.Type == fsimage.Symlink) {
		return fmt.Errorf("%w: inode %d changed type between passes", fsimage.ErrCorrupt, e.ID)
	}
	if r == b.root {
		if len(e.Name) != 0 {
			return fmt.Errorf("%w: the root has a name, %q", fsimage.ErrCorrupt, e.Name)
		}
		return nil
	}
	if err := fspath.CheckName(string(e.Name)); err != nil || containsSlash(e.Name) {
		return fmt.Errorf("%w: inode %d's name %q: %v", ErrInvalid, e.ID, e.Name, err)
	}
	return nil
}

func containsSlash(b []byte) bool {
	for _, c := range b {
		if c == '/' {
			return true
		}
	}
	return false
}

// count adds what e holds to its directory's direct sums.
func (b *builder) count(r uint64, e *fsimage.Entry) {
	switch {
	case e.Type == fsimage.Symlink:
		return
	case e.UnderConstruction:
		b.res.UnderConstruction++
	}
	p := b.parent[r]
	if p == 0 {
		return
	}
	s, _ := b.dirs.rank(uint64(p - 1))
	a := &b.agg[s]
	a.children++
	if e.IsDir() {
		a.dirs++
	} else {
		a.files++
		a.bytes += e.Length
	}
}
