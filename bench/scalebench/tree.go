package scalebench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/stratafs/strata/internal/fsimage"
)

// Tree is a synthetic namespace shaped as seed 002's (a real HDFS
// warehouse): /warehouse/DB.db/TABLE/dt=DATE[/h=HOUR]/part-N-UUID.parquet,
// paths 5 to 6 deep (7 with a bucket directory), leaf directories of 10 to
// 100,000 files, file sizes drawn from the seed's distribution, about one
// inode in a hundred a directory. It is an fsimage.Source: the import's
// path takes it as it takes an HDFS image. Its passes regenerate it from
// its seed; nothing of it is kept.
type Tree struct {
	// Files is about how many files the tree holds.
	Files uint64
	// Seed makes another tree of the same shape.
	Seed uint64
	// BigTable, if set, is a table of that many files in 154 partitions
	// (the seed's ls -R sample: 2.7 million files); BigDB a database of
	// that many files in directories of 36 files on average (its count
	// sample: 18 million files in 500,000 directories).
	BigTable, BigDB uint64

	count uint64
}

// Where the big samples are in a tree.
const (
	BigTablePath = "/warehouse/sample.db/tbl_sample_daily"
	BigDBPath    = "/warehouse/big.db"
)

// NewTree returns the tree, its inodes counted (one walk without names).
func NewTree(t Tree) *Tree {
	t.count = 0
	t.walk(func(*node) {})
	return &t
}

// Root implements fsimage.Source.
func (t *Tree) Root() uint64 { return 1 }

// Count implements fsimage.Source.
func (t *Tree) Count() uint64 { return t.count }

// Span implements fsimage.Source.
func (t *Tree) Span() (uint64, uint64) { return 1, t.count }

// IDs implements fsimage.Source.
func (t *Tree) IDs(fn func(uint64, fsimage.Type) error) error {
	return t.each(func(n *node) error { return fn(n.id, n.typ()) })
}

// Children implements fsimage.Source.
func (t *Tree) Children(fn func(uint64, []uint64) error) error {
	kid := make([]uint64, 1)
	return t.each(func(n *node) error {
		if n.parent == 0 {
			return nil
		}
		kid[0] = n.id
		return fn(n.parent, kid)
	})
}

// Entries implements fsimage.Source.
func (t *Tree) Entries(fn func(*fsimage.Entry) error) error {
	var e fsimage.Entry
	var name []byte
	return t.each(func(n *node) error {
		name = n.name(name[:0])
		e = fsimage.Entry{ID: n.id, Type: n.typ(), Name: name, Perm: 0o644, User: users[n.owner%len(users)],
			Group: groups[n.owner%len(groups)], Mtime: n.mtime, Atime: n.mtime, NSQuota: fsimage.NoQuota, DSQuota: fsimage.NoQuota}
		if n.dir {
			e.Perm = 0o755
			return fn(&e)
		}
		e.Length, e.Replication, e.BlockSize = n.size, 3, 128<<20
		e.Blocks = uint32((n.size + e.BlockSize - 1) / e.BlockSize)
		return fn(&e)
	})
}

var (
	users  = []string{"hive", "spark", "etl", "analyst"}
	groups = []string{"hadoop", "etl", "analysts"}
)

// node is one inode as the walk makes it.
type node struct {
	id, parent uint64
	dir        bool
	kind       byte // what names it: see name
	a, b       uint64
	owner      int
	mtime      int64
	size       uint64
}

func (n *node) typ() fsimage.Type {
	if n.dir {
		return fsimage.Dir
	}
	return fsimage.File
}

// name appends the node's name to b.
func (n *node) name(b []byte) []byte {
	switch n.kind {
	case 'r':
		return b
	case 'w':
		return append(b, "warehouse"...)
	case 'd': // a database; a < 0 are the samples
		switch n.a {
		case math.MaxUint64:
			return append(b, "sample.db"...)
		case math.MaxUint64 - 1:
			return append(b, "big.db"...)
		}
		return fmt.Appendf(b, "db_%05d.db", n.a)
	case 't':
		if n.a == math.MaxUint64 {
			return append(b, "tbl_sample_daily"...)
		}
		return fmt.Appendf(b, "tbl_%06d_daily", n.a)
	case 'p': // a day, from 2020-01-01
		y, m, d := dayOf(n.a)
		return fmt.Appendf(b, "dt=%04d-%02d-%02d", y, m, d)
	case 'h':
		return fmt.Appendf(b, "h=%02d", n.a)
	}
	// A file: its number in the partition, and its table's write id.
	b = append(b, "part-"...)
	b = appendPadded(b, n.a, 5)
	b = append(b, '-')
	b = strconv.AppendUint(b, n.b, 16)
	return append(b, "-c000.snappy.parquet"...)
}

func appendPadded(b []byte, v uint64, width int) []byte {
	s := strconv.FormatUint(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

func dayOf(n uint64) (int, int, int) {
	y, m, d := int(2020+n/360), int(n%360/30+1), int(n%30+1)
	return y, m, d
}

// each walks the tree, stopping at fn's first error.
func (t *Tree) each(fn func(*node) error) error {
	var err error
	t.walk(func(n *node) {
		if err == nil {
			err = fn(n)
		}
	})
	return err
}

// walk makes the tree, depth first, and calls fn with each node; ids are
// the order of the walk. It counts the tree the first time.
func (t *Tree) walk(fn func(*node)) {
	w := &walker{fn: fn, rnd: rand.New(rand.NewPCG(t.Seed, 0x5ca1e))}
	w.emit(&node{dir: true, kind: 'r'})
	wh := w.emit(&node{parent: 1, dir: true, kind: 'w'})
	if t.BigTable > 0 {
		db := w.emit(&node{parent: wh, dir: true, kind: 'd', a: math.MaxUint64})
		w.table(db, math.MaxUint64, 154, t.BigTable/154, false)
	}
	if t.BigDB > 0 {
		db := w.emit(&node{parent: wh, dir: true, kind: 'd', a: math.MaxUint64 - 1})
		for i := uint64(0); w.filesFrom(db) < t.BigDB; i++ {
			w.table(db, i, 200, 36, w.rnd.IntN(2) == 0)
		}
	}
	for d := uint64(0); w.files < t.Files; d++ {
		db := w.emit(&node{parent: wh, dir: true, kind: 'd', a: d})
		for tb := uint64(0); tb < 50 && w.files < t.Files; tb++ {
			w.table(db, d*50+tb, 0, 0, w.rnd.IntN(4) == 0)
		}
	}
	t.count = w.next - 1
}

// walker is a walk's state.
type walker struct {
	fn       func(*node)
	rnd      *rand.Rand
	next     uint64 // the next id
	files    uint64
	n        node
	lastDB   uint64
	dbFiles0 uint64
}

func (w *walker) emit(n *node) uint64 {
	if w.next == 0 {
		w.next = 1
	}
	n.id = w.next
	w.next++
	n.owner = int(n.id % 7)
	n.mtime = 1_600_000_000_000 + int64(n.id%100_000_000)*317
	w.fn(n)
	return n.id
}

// filesFrom counts the files made since database db was begun.
func (w *walker) filesFrom(db uint64) uint64 {
	if w.lastDB != db {
		w.lastDB, w.dbFiles0 = db, w.files
	}
	return w.files - w.dbFiles0
}

// table makes a table of parts partitions (0: drawn) of perPart files each
// (0: drawn per partition), the partitions split by hour if hourly.
func (w *walker) table(db, id, parts, perPart uint64, hourly bool) {
	tb := w.emit(&node{parent: db, dir: true, kind: 't', a: id})
	if parts == 0 {
		parts = 1 + uint64(math.Exp(w.rnd.Float64()*math.Log(400)))
	}
	write := w.rnd.Uint64() >> 16
	start := w.rnd.Uint64N(2000)
	for p := uint64(0); p < parts; p++ {
		part := w.emit(&node{parent: tb, dir: true, kind: 'p', a: start + p})
		n := perPart
		if n == 0 {
			n = w.leafSize()
		}
		if !hourly {
			w.leaf(part, n, write)
			continue
		}
		for h := uint64(0); h < 4; h++ {
			w.leaf(w.emit(&node{parent: part, dir: true, kind: 'h', a: h * 6}), max(n/4, 1), write)
		}
	}
}

// leafSize draws the files of a leaf directory: 10 to 200 (99.5%), or
// 1,000 to 100,000.
func (w *walker) leafSize() uint64 {
	if w.rnd.IntN(200) == 0 {
		return uint64(1000 * math.Exp(w.rnd.Float64()*math.Log(100)))
	}
	return uint64(10 * math.Exp(w.rnd.Float64()*math.Log(20)))
}

// leaf makes n files in dir.
func (w *walker) leaf(dir, n, write uint64) {
	for i := uint64(0); i < n; i++ {
		f := &w.n
		*f = node{parent: dir, kind: 'f', a: i, b: write, size: w.size()}
		w.emit(f)
		w.files++
	}
}

// sizes is seed 002's distribution of file sizes: the share of files in
// each range (directories left out).
var sizes = []struct {
	share    float64
	min, max float64
}{
	{2.40, 0, 0}, {33.66, 1, 128 << 10}, {16.71, 128 << 10, 1 << 20}, {15.49, 1 << 20, 8 << 20},
	{18.18, 8 << 20, 64 << 20}, {9.26, 64 << 20, 512 << 20}, {2.82, 512 << 20, 4 << 30},
}

func (w *walker) size() uint64 {
	x := w.rnd.Float64() * 98.52
	for _, s := range sizes {
		if x < s.share {
			if s.max == 0 {
				return 0
			}
			return uint64(s.min + w.rnd.Float64()*(s.max-s.min))
		}
		x -= s.share
	}
	return 1
}
