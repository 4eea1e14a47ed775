package bulkload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratafs/strata/internal/fsimage"
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
)

// The key ranges a build writes, each as tables of its own, in this order.
const (
	streamNames  = "names"  // directory entries, 0x02
	streamInodes = "inodes" // inodes, 0x03, a directory's quotas in its own
)

// emit writes the tables the manifest does not list yet.
func (b *builder) emit() error {
	for _, s := range []struct {
		name string
		fn   func(start uint64, out *tables) error
	}{{streamNames, b.emitNames}, {streamInodes, b.emitInodes}} {
		start, _ := b.m.resume(s.name)
		out := &tables{b: b, stream: s.name}
		if err := s.fn(start, out); err != nil {
			out.abort()
			return err
		}
		if err := out.finish(b.n); err != nil {
			return err
		}
	}
	if b.o.DataMissing && !b.m.Report {
		return b.report()
	}
	return nil
}

// tables writes one stream's tables, closing each at the size the options
// give, at a point where the stream can go on from.
type tables struct {
	b      *builder
	stream string
	w      *pebblekv.TableWriter
	name   string
	keys   uint64
}

func (t *tables) set(k, v []byte) error {
	if t.w == nil {
		n := 0
		for _, x := range t.b.m.Tables {
			if x.Stream == t.stream {
				n++
			}
		}
		t.name = fmt.Sprintf("%s-%05d.sst", t.stream, n)
		w, err := pebblekv.CreateTable(filepath.Join(t.b.o.Dir, t.name))
		if err != nil {
			return err
		}
		t.w = w
	}
	t.keys++
	return t.w.Set(k, v)
}

// boundary is a point where the stream may go on from next: the table
// ends there if it is full.
func (t *tables) boundary(next uint64) error {
	if t.w == nil || t.w.Size() < t.b.o.TableBytes {
		return nil
	}
	return t.finish(next)
}

// finish closes the table being written, if any, and lists it in the
// manifest.
func (t *tables) finish(next uint64) error {
	if t.w == nil {
		return nil
	}
	w := t.w
	t.w = nil
	if err := w.Close(); err != nil {
		return err
	}
	path := filepath.Join(t.b.o.Dir, t.name)
	sum, size, err := FileSHA256(path)
	if err != nil {
		return err
	}
	t.b.m.Tables = append(t.b.m.Tables, Table{Name: t.name, Size: size, SHA256: sum, Keys: t.keys, Stream: t.stream, Next: next})
	t.keys = 0
	if err := t.b.m.save(); err != nil {
		return err
	}
	t.b.progress("tables", uint64(len(t.b.m.Tables)), 0)
	if t.b.o.OnTable != nil {
		t.b.o.OnTable(t.b.m.Tables[len(t.b.m.Tables)-1])
	}
	return nil
}

func (t *tables) abort() {
	if t.w != nil {
		t.w.Abort()
		t.w = nil
	}
}

// child is one entry of a directory, for sorting by name.
type child struct {
	name []byte
	rank uint64
}

// emitNames writes every reached directory's entries, directories by rank,
// each one's by name (bytewise, as the keys sort).
func (b *builder) emitNames(start uint64, out *tables) error {
	var kids []child
	var key []byte
	done := uint64(0)
	return b.eachDir(func(s, r uint64) error {
		done++
		if r < start || !b.reach.has(r) {
			return nil
		}
		kids = kids[:0]
		for _, k := range b.kids[b.kidStart[s]:b.kidStart[s+1]] {
			if !b.links.has(uint64(k)) {
				kids = append(kids, child{b.sc.name(b.off[k] - 1), uint64(k)})
			}
		}
		slices.SortFunc(kids, func(x, y child) int { return bytes.Compare(x.name, y.name) })
		dir := b.o.Base + r
		for i, c := range kids {
			if i > 0 && bytes.Equal(c.name, kids[i-1].name) {
				return fmt.Errorf("%w: %s holds two entries named %q", ErrInvalid, b.path(r), c.name)
			}
			if b.agg[s].pathLen+1+uint32(len(c.name)) > fspath.MaxPathLen {
				return fmt.Errorf("%w: %s/%s is longer than %d bytes", ErrInvalid, b.path(r), c.name, fspath.MaxPathLen)
			}
			typ := kvschema.TypeFile
			if _, isDir := b.dirs.rank(c.rank); isDir {
				typ = kvschema.TypeDir
			}
			key = kvschema.AppendDentryKey(key[:0], dir, c.name)
			if err := out.set(key, kvschema.EncodeDentry(kvschema.Dentry{Child: b.o.Base + c.rank, Type: typ})); err != nil {
				return err
			}
		}
		if done%(1<<12) == 0 {
			b.progress("writing names", done, b.dirs.n)
		}
		return out.boundary(r + 1)
	})
}

// emitInodes writes every reached inode's record, by rank.
func (b *builder) emitInodes(start uint64, out *tables) error {
	var rec record
	var n kvschema.Inode
	var val []byte
	for r := start; r < b.n; r++ {
		if !b.reach.has(r) || b.links.has(r) {
			continue
		}
		b.sc.read(b.off[r]-1, &rec)
		b.inode(r, &rec, &n)
		val = kvschema.AppendInode(val[:0], &n)
		if err := out.set(kvschema.InodeKey(n.ID), val); err != nil {
			return err
		}
		if r%(1<<16) == 0 {
			b.progress("writing inodes", r, b.n)
		}
		if err := out.boundary(r + 1); err != nil {
			return err
		}
	}
	return nil
}

// inode fills n with the inode of rank r, whose record is rec.
func (b *builder) inode(r uint64, rec *record, n *kvschema.Inode) {
	*n = kvschema.Inode{ID: b.o.Base + r, Name: string(rec.Name), Perm: rec.Perm,
		Owner: b.users.list[rec.User], Group: b.users.list[rec.Group], Mtime: rec.Mtime, Atime: rec.Atime}
	if p := b.parent[r]; p != 0 {
		n.Parent = b.o.Base + uint64(p-1)
	}
	if s, isDir := b.dirs.rank(r); isDir {
		a := &b.agg[s]
		n.Type = kvschema.TypeDir
		n.Children, n.SubFiles, n.SubDirs, n.SubLength = a.children, a.subFiles, a.subDirs, a.subLen
		if rec.NSQuota != fsimage.NoQuota || rec.DSQuota != fsimage.NoQuota {
			n.Quota = &kvschema.Quota{Names: rec.NSQuota, Space: b.spaceQuota(rec.DSQuota)}
		}
		return
	}
	n.Type, n.Length, n.BlockSize = kvschema.TypeFile, rec.Length, rec.BlockSize
	// Erasure-coded files record no replication; HDFS reports them at 1.
	n.Replication = max(rec.Replication, 1)
}

// report lists, one path a line, every reached file with bytes: those
// whose data the namespace does not have.
func (b *builder) report() error {
	path := filepath.Join(b.o.Dir, "unreachable.txt")
	f, err := os.OpenFile(path+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var rec record
	err = b.eachDir(func(s, r uint64) error {
		if !b.reach.has(r) || b.agg[s].files == 0 {
			return nil
		}
		dir := b.path(r)
		if dir == "/" {
			dir = ""
		}
		for _, k := range b.kids[b.kidStart[s]:b.kidStart[s+1]] {
			b.sc.read(b.off[k]-1, &rec)
			if rec.Type == fsimage.File && rec.Length > 0 {
				fmt.Fprintf(w, "%s/%s\n", dir, rec.Name)
			}
		}
		return nil
	})
	if err = errors.Join(err, w.Flush(), f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	b.m.Report = true
	return b.m.save()
}

// spaceQuota is Strata's space quota for HDFS's q: HDFS charges a file's
// bytes times its replication against it, Strata each byte once, so the
// bytes an admin could store under it stay what they were at the cluster's
// default replication (Options.Replication).
func (b *builder) spaceQuota(q int64) int64 {
	if q == fsimage.NoQuota {
		return q
	}
	return q / int64(b.o.replication())
}

// result sums the build up.
func (b *builder) result() (*Result, error) {
	res := b.res
	res.Tables = b.m.Tables
	res.Root = b.o.Base + b.root
	rs, _ := b.dirs.rank(b.root)
	a := b.agg[rs]
	res.Files, res.Dirs, res.Bytes = a.subFiles, a.subDirs+1, a.subLen
	var rec record
	for r := uint64(0); r < b.n; r++ {
		_, isDir := b.dirs.rank(r)
		switch {
		case !b.reach.has(r):
			res.SnapshotOnly++
		case b.links.has(r):
			res.Symlinks++
		case isDir:
			if b.sc.read(b.off[r]-1, &rec); rec.DSQuota != fsimage.NoQuota {
				res.SpaceQuotas++
			}
		case b.o.DataMissing:
			if b.sc.read(b.off[r]-1, &rec); rec.Length > 0 {
				res.Unreachable++
			}
		}
	}
	res.Replication = b.o.replication()
	if b.o.DataMissing {
		res.UnreachableList = filepath.Join(b.o.Dir, "unreachable.txt")
	}
	return &res, nil
}
