package pebblekv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/stratafs/strata/internal/kv"
)

// Sorted tables: the state built whole elsewhere (a namespace imported in
// bulk) and added to a store by Ingest, which links the files in, with no
// write of their keys through the memtable, the log or a compaction.

// TableWriter writes a sorted table that a store can Ingest: its keys in
// ascending order, each once, all of them set (no deletions).
type TableWriter struct {
	path string
	f    vfs.File
	w    *sstable.Writer
	last []byte
	n    int
}

// CreateTable creates the table at path (0600; it holds state).
func CreateTable(path string) (*TableWriter, error) {
	f, err := privateFS{vfs.Default}.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	o := options(stateMemTable)
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), o.MakeWriterOptions(len(o.Levels)-1, o.FormatMajorVersion.MaxTableFormat()))
	return &TableWriter{path: path, f: f, w: w}, nil
}

// Set adds a key, which must sort after the one added before.
func (t *TableWriter) Set(k, v []byte) error {
	if t.n > 0 && bytes.Compare(k, t.last) <= 0 {
		return fmt.Errorf("pebblekv: table %s: key %x after %x", t.path, k, t.last)
	}
	t.last = append(t.last[:0], k...)
	t.n++
	return t.w.Set(k, v)
}

// Keys is how many keys were added.
func (t *TableWriter) Keys() int { return t.n }

// Size estimates the table's size so far, in bytes.
func (t *TableWriter) Size() uint64 { return t.w.Raw().EstimatedSize() }

// Close finishes the table and makes it durable. (The sstable writer syncs
// and closes the file.)
func (t *TableWriter) Close() error {
	return t.w.Close()
}

// Abort closes and removes an unfinished table.
func (t *TableWriter) Abort() {
	_ = t.w.Close()
	_ = os.Remove(t.path)
}

// ErrBadTable is a table that Ingest must not take: one that does not read,
// or holds anything but keys set.
var ErrBadTable = errors.New("pebblekv: not a table of set keys")

// VerifyTable reads every key of the table at path, in order, and gives
// each to check. Every block's checksum is verified on the way; a table
// with deletions, range deletions or range keys (which would change keys
// outside it), or that does not read, is refused with ErrBadTable.
func VerifyTable(path string, check func(k, v []byte) error) error {
	r, err := openTable(path)
	if err != nil {
		return err
	}
	defer r.Close()
	ctx := context.Background()
	for _, open := range []func() (bool, error){
		func() (bool, error) {
			it, err := r.NewRawRangeDelIter(ctx, block.NoFragmentTransforms, sstable.NoReadEnv)
			return it != nil, err
		},
		func() (bool, error) {
			it, err := r.NewRawRangeKeyIter(ctx, block.NoFragmentTransforms, sstable.NoReadEnv)
			return it != nil, err
		},
	} {
		if has, err := open(); has || err != nil {
			return fmt.Errorf("%w: it holds range deletions or range keys (%v)", ErrBadTable, err)
		}
	}
	it, err := r.NewIter(block.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadTable, err)
	}
	defer it.Close()
	for kv := it.First(); kv != nil; kv = it.Next() {
		if kv.Kind() != pebble.InternalKeyKindSet {
			return fmt.Errorf("%w: key %x is a %v", ErrBadTable, kv.K.UserKey, kv.Kind())
		}
		v, _, err := kv.Value(nil)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadTable, err)
		}
		if err := check(kv.K.UserKey, v); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("%w: %v", ErrBadTable, err)
	}
	return nil
}

// Ingest adds the tables at paths, which no key of the store or of each
// other falls between the first and last keys of, and the writes of ov, as
// one atomic change: after a crash, the store has all of it or none.
// The tables must be on the store's file system; they are moved into it.
// The hot cache is emptied, as it may hold what the change replaced.
func (s *Store) Ingest(paths []string, ov *kv.Overlay) error {
	small, err := s.overlayTables(paths, ov)
	defer func() {
		for _, p := range small {
			_ = os.Remove(p)
		}
	}()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.closeSeek(); err != nil {
		return err
	}
	if err := s.db.Ingest(context.Background(), append(slices.Clone(paths), small...)); err != nil {
		return err
	}
	s.cache = newHotCache(s.opts.HotBytes)
	return nil
}

// overlayTables writes ov's writes as tables of their own, one for each
// gap between the tables at paths that its keys fall in: tables ingested
// together must not overlap.
func (s *Store) overlayTables(paths []string, ov *kv.Overlay) ([]string, error) {
	bounds, err := tableBounds(paths)
	if err != nil {
		return nil, err
	}
	type write struct {
		k, v    []byte
		deleted bool
	}
	var writes []write
	ov.Each(func(k, v []byte, deleted bool) { writes = append(writes, write{k, v, deleted}) })
	slices.SortFunc(writes, func(a, b write) int { return bytes.Compare(a.k, b.k) })
	var out []string
	var w *sstable.Writer
	gap := -1
	o := options(stateMemTable)
	finish := func() error {
		if w == nil {
			return nil
		}
		err := w.Close()
		w = nil
		return err
	}
	for _, wr := range writes {
		g, inside := gapOf(bounds, wr.k)
		if inside {
			return out, fmt.Errorf("pebblekv: ingest: key %x written beside a table that holds it", wr.k)
		}
		if w == nil || g != gap {
			if err := finish(); err != nil {
				return out, err
			}
			p := filepath.Join(filepath.Dir(s.dir), fmt.Sprintf(".ingest-%d.sst", len(out)))
			f, err := privateFS{vfs.Default}.Create(p, vfs.WriteCategoryUnspecified)
			if err != nil {
				return out, err
			}
			out = append(out, p)
			w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), o.MakeWriterOptions(0, s.db.TableFormat()))
			gap = g
		}
		if wr.deleted {
			err = w.Delete(wr.k)
		} else {
			err = w.Set(wr.k, wr.v)
		}
		if err != nil {
			return out, err
		}
	}
	return out, finish()
}

// tableBounds returns the first and last keys of each table, sorted.
func tableBounds(paths []string) ([][2][]byte, error) {
	var out [][2][]byte
	for _, p := range paths {
		var first, last []byte
		err := VerifyBounds(p, func(lo, hi []byte) { first, last = lo, hi })
		if err != nil {
			return nil, err
		}
		if first != nil {
			out = append(out, [2][]byte{first, last})
		}
	}
	slices.SortFunc(out, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	return out, nil
}

// gapOf returns which gap between the tables k falls in (0 before the
// first), or inside if it falls within one.
func gapOf(bounds [][2][]byte, k []byte) (gap int, inside bool) {
	i, _ := slices.BinarySearchFunc(bounds, k, func(b [2][]byte, k []byte) int { return bytes.Compare(b[0], k) })
	// bounds[i-1] starts at or before k (or i is 0).
	if i > 0 && bytes.Compare(k, bounds[i-1][1]) <= 0 {
		return i, true
	}
	if i < len(bounds) && bytes.Equal(bounds[i][0], k) {
		return i, true
	}
	return i, false
}

// VerifyBounds gives fn the first and last keys of the table at path (nil
// for an empty one), reading its index only.
func VerifyBounds(path string, fn func(first, last []byte)) error {
	r, err := openTable(path)
	if err != nil {
		return err
	}
	defer r.Close()
	it, err := r.NewIter(block.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return err
	}
	defer it.Close()
	first := it.First()
	if first == nil {
		fn(nil, nil)
		return it.Error()
	}
	lo := bytes.Clone(first.K.UserKey)
	last := it.Last()
	fn(lo, bytes.Clone(last.K.UserKey))
	return it.Error()
}

// openTable opens the table at path for reading.
func openTable(path string) (*sstable.Reader, error) {
	f, err := vfs.Default.Open(path)
	if err != nil {
		return nil, err
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := sstable.NewReader(context.Background(), readable, options(stateMemTable).MakeReaderOptions())
	if err != nil {
		readable.Close()
		return nil, fmt.Errorf("%w: %v", ErrBadTable, err)
	}
	return r, nil
}
