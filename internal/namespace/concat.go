package namespace

import (
	"fmt"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Upload is a block the service made of a small file's inline content
// before a concat (under the target's inode), for the file Inode as it was
// at Mtime.
type Upload struct {
	Inode uint64
	Mtime int64
	Block kvschema.Block // its ID and Length; the offset is the concat's
}

// Concat appends the closed files srcs, in order, to the closed file
// target and removes them, as HDFS's concat does: no source may be empty,
// the target or another source, and the caller needs write permission on
// the target, and read permission on each source and write permission on
// its directory. No byte moves: the sources' blocks become the target's,
// their objects keeping their names (kvschema.Block.ObjectInode); the
// inline content of a small file comes as a block the service uploaded
// (uploads), which must be of the file as it still is.
func (fs *FS) Concat(tx kv.Txn, now int64, c Caller, ns, target string, srcs []string, uploads []Upload) error {
	if err := fs.concat(tx, now, c, ns, target, srcs, uploads); err != nil {
		return pathErr("concat", target, err)
	}
	return nil
}

func (fs *FS) concat(tx kv.Txn, now int64, c Caller, ns, target string, srcs []string, uploads []Upload) error {
	if len(srcs) == 0 {
		return fserr.Errorf(ErrInvalidArgument, "concat: the list of sources is empty")
	}
	res, err := fs.resolveExisting(tx, c, ns, target)
	if err != nil {
		return err
	}
	t := res.node
	switch {
	case t.IsDir():
		return ErrIsDir
	case res.ns.IsCache():
		return fserr.Errorf(ErrUnsupported, "concat: a cache-mode namespace's files are objects, which are not concatenated")
	case t.Holder != "":
		return fserr.Errorf(ErrLeaseConflict, "concat: the target file is being written")
	case !fs.check(c, t, accessWrite):
		return ErrPermission
	}
	files, err := fs.concatSources(tx, c, ns, t, srcs)
	if err != nil {
		return err
	}
	merged, err := concatBlocks(tx, append([]*kvschema.Inode{t}, files...), uploads)
	if err != nil {
		return err
	}
	var added uint64
	for _, s := range files {
		added += s.Length
		if err := dropConcatSource(tx, now, s); err != nil {
			return err
		}
	}
	if t.Inline {
		tx.Delete(kvschema.InlineKey(t.ID))
		t.Inline = false
	}
	for i, b := range merged {
		tx.Set(kvschema.BlockKey(t.ID, uint32(i)), kvschema.EncodeBlock(b))
	}
	t.Blocks, t.Length, t.Mtime = uint32(len(merged)), t.Length+added, now
	putInode(tx, t)
	return adjust(tx, t.Parent, 0, 0, delta{length: int64(added)})
}

// concatSources resolves and checks the sources of a concat into target t.
func (fs *FS) concatSources(tx kv.Txn, c Caller, ns string, t *kvschema.Inode, srcs []string) ([]*kvschema.Inode, error) {
	seen := map[uint64]bool{t.ID: true}
	out := make([]*kvschema.Inode, 0, len(srcs))
	for _, p := range srcs {
		res, err := fs.resolveExisting(tx, c, ns, p)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", p, err)
		}
		s := res.node
		switch {
		case s.ID == t.ID:
			return nil, fserr.Errorf(ErrInvalidArgument, "concat: the source file %s is the target file", p)
		case seen[s.ID]:
			return nil, fserr.Errorf(ErrInvalidArgument, "concat: the source file %s is given twice", p)
		case s.IsDir():
			return nil, fmt.Errorf("source %s: %w", p, ErrIsDir)
		case s.Holder != "" || s.Length == 0:
			return nil, fserr.Errorf(ErrInvalidArgument, "concat: source file %s is invalid or empty or underConstruction", p)
		case pendingScan(tx, s.ID):
			// NB: the collector's scan of a file that is gone would delete
			// every object under its inode, which the target names now.
			return nil, fserr.Errorf(ErrUnavailable, "concat: source %s awaits the scan of what a writer of it "+
				"left behind: try again in a minute", p)
		case !fs.check(c, s, accessRead) || !fs.check(c, res.parent, accessWrite|accessExec) ||
			!fs.checkSticky(c, res.parent, s):
			return nil, fmt.Errorf("source %s: %w", p, ErrPermission)
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out, nil
}

// concatBlocks is the block list of files, one after the other: each
// file's blocks, their objects where they are, or the upload of an inline
// file's content.
func concatBlocks(tx kv.Reader, files []*kvschema.Inode, uploads []Upload) ([]kvschema.Block, error) {
	var out []kvschema.Block
	var off uint64
	for _, f := range files {
		if f.Inline && f.Length > 0 {
			u, ok := uploadOf(uploads, f)
			if !ok {
				return nil, fserr.Errorf(ErrInvalidArgument,
					"concat: the small file %s changed while it was made a block: try again", f.Name)
			}
			out = append(out, kvschema.Block{ID: u.Block.ID, Offset: off, Length: f.Length})
			off += f.Length
			continue
		}
		bl, err := fileBlocks(tx, f)
		if err != nil {
			return nil, err
		}
		for _, b := range bl {
			b.ObjectInode = b.Owner(f.ID)
			if b.ObjectInode == files[0].ID {
				b.ObjectInode = 0 // the target's own
			}
			b.Offset = off + b.Offset
			out = append(out, b)
		}
		off += f.Length
	}
	return out, nil
}

// uploadOf finds the upload made of inline file f as it is.
func uploadOf(uploads []Upload, f *kvschema.Inode) (Upload, bool) {
	for _, u := range uploads {
		if u.Inode == f.ID && u.Mtime == f.Mtime && u.Block.Length == f.Length {
			return u, true
		}
	}
	return Upload{}, false
}

// dropConcatSource removes concatenated file s: its name, inode, inline
// content and block records, but not its blocks' objects, which the target
// names now.
func dropConcatSource(tx kv.Txn, now int64, s *kvschema.Inode) error {
	if err := unlink(tx, now, s); err != nil {
		return err
	}
	for i := range s.Blocks {
		tx.Delete(kvschema.BlockKey(s.ID, i))
	}
	if s.Inline {
		tx.Delete(kvschema.InlineKey(s.ID))
	}
	tx.Delete(kvschema.InodeKey(s.ID))
	return nil
}

// pendingScan reports whether the collector is to scan file ino's objects
// for what no committed block names (queueOrphanScan).
func pendingScan(r kv.Reader, ino uint64) bool {
	_, ok, err := r.Get(kvschema.GarbageKey(ino, 0))
	return ok || err != nil
}
