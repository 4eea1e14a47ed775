package namespace

import (
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/storagepolicy"
)

// Stat returns the attributes of path.
func (fs *FS) Stat(r kv.Reader, c Caller, ns, path string) (*kvschema.Inode, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return nil, pathErr("stat", path, err)
	}
	return res.node, nil
}

// Content is what a reader needs to read a file.
type Content struct {
	Blocks []kvschema.Block
	Inline []byte // the content of an inline file
	// Cache mode: the blocks are ranges of this object, of this version.
	ObjectKey, Version string
	// A file being written that was flushed: its bytes from TailOffset to
	// its length are its tail (ReadTail); HasTail says there is one.
	TailOffset uint64
	HasTail    bool
	// Policy is the file's effective storage policy, which its readers'
	// block token carries (a HOT file's blocks are pinned as they are read).
	Policy storagepolicy.ID
}

// Open returns a file's attributes and content for reading.
func (fs *FS) Open(r kv.Reader, c Caller, ns, path string) (*kvschema.Inode, *Content, error) {
	n, content, err := fs.open(r, c, ns, path)
	if err != nil {
		return nil, nil, pathErr("open", path, err)
	}
	return n, content, nil
}

func (fs *FS) open(r kv.Reader, c Caller, ns, path string) (*kvschema.Inode, *Content, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return nil, nil, err
	}
	n := res.node
	if n.IsDir() {
		return nil, nil, ErrIsDir
	}
	if !fs.check(c, n, accessRead) {
		return nil, nil, ErrPermission
	}
	if fs.IsSuperuser(c) {
		if no, err := unreadableBySuperuser(r, n); err != nil || no {
			return nil, nil, orErr(err, fserr.Errorf(ErrPermission,
				"Access is denied for %s since the superuser is not allowed to perform this operation.", c.User))
		}
	}
	content := &Content{Policy: effectivePolicy(n, res.dirs)}
	if res.ns.IsCache() {
		return n, content, fs.objectContent(r, res.parts, n, content)
	}
	if n.Inline {
		v, ok, err := r.Get(kvschema.InlineKey(n.ID))
		if err != nil || !ok {
			return nil, nil, orErr(err, kvschema.ErrCorrupt)
		}
		content.Inline = append([]byte(nil), v...)
	}
	if content.Blocks, err = fileBlocks(r, n); err != nil {
		return nil, nil, err
	}
	if !n.Inline {
		end := uint64(0)
		if k := len(content.Blocks); k > 0 {
			end = content.Blocks[k-1].Offset + content.Blocks[k-1].Length
		}
		content.TailOffset, content.HasTail = end, n.Length > end
		if content.HasTail && n.Holder == "" {
			// A closed file keeps no tail: its blocks hold it all, unless
			// it came in an import of metadata alone.
			return nil, nil, fserr.Errorf(ErrUnsupported, "its %d bytes are not in Strata: the file was imported "+
				"without its data (strata admin import of metadata only)", n.Length)
		}
	}
	return n, content, nil
}

// Listing is one page of a directory listing.
type Listing struct {
	Self    *kvschema.Inode   // the listed path
	Entries []*kvschema.Inode // sorted by name
	More    bool              // entries follow the last one
}

// List returns up to limit entries of directory path whose names sort after
// startAfter. A file lists as itself, as in HDFS.
func (fs *FS) List(r kv.Reader, c Caller, ns, path, startAfter string, limit int) (*Listing, error) {
	l := &Listing{}
	var err error
	l.Self, l.More, err = fs.ListRecords(r, c, ns, path, startAfter, limit, func(rec []byte) error {
		n, err := kvschema.DecodeInode(rec)
		l.Entries = append(l.Entries, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ListRecords is List that hands each entry's inode record to fn, in name
// order, instead of decoding it: a listing encodes its entries for the
// wire straight from their records. The record is good only during the
// call; fn's error stops the listing and is returned. It returns the listed
// path's inode and whether entries follow the last one.
func (fs *FS) ListRecords(r kv.Reader, c Caller, ns, path, startAfter string, limit int,
	fn func(rec []byte) error) (self *kvschema.Inode, more bool, err error) {
	self, more, err = fs.list(r, c, ns, path, startAfter, limit, fn)
	if err != nil {
		return nil, false, pathErr("list", path, err)
	}
	return self, more, nil
}

func (fs *FS) list(r kv.Reader, c Caller, ns, path, startAfter string, limit int,
	fn func(rec []byte) error) (*kvschema.Inode, bool, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return nil, false, err
	}
	n := res.node
	if !n.IsDir() {
		return n, false, fn(kvschema.EncodeInode(n))
	}
	if !fs.check(c, n, accessRead|accessExec) {
		return nil, false, ErrPermission
	}
	start, end := kvschema.DentryRange(n.ID)
	if startAfter != "" {
		start = append(kvschema.DentryKey(n.ID, startAfter), 0)
	}
	more, err := childRecordsFrom(r, start, end, limit, fn)
	return n, more, err
}

// childRecordsFrom hands fn the inode records of the first limit dentries
// in [start, end) and reports whether more follow. The page's inodes are
// read together (kv.GetMany) once its dentries are.
func childRecordsFrom(r kv.Reader, start, end []byte, limit int, fn func(rec []byte) error) (bool, error) {
	more := false
	var keys [][]byte
	var derr error
	err := r.Scan(start, end, func(_, v []byte) bool {
		if len(keys) == limit {
			more = true
			return false
		}
		var d kvschema.Dentry
		if d, derr = kvschema.DecodeDentry(v); derr != nil {
			return false
		}
		keys = append(keys, kvschema.InodeKey(d.Child))
		return true
	})
	if err = orErr(err, derr); err != nil {
		return false, err
	}
	err = kv.GetMany(r, keys, func(_ int, rec []byte, ok bool) error {
		if !ok {
			return kvschema.ErrCorrupt // a dentry points to nothing
		}
		return fn(rec)
	})
	return more, err
}

// Summary is a content summary: the aggregates of a subtree.
type Summary struct {
	Length uint64
	Files  uint64
	Dirs   uint64 // counts the directory itself, as HDFS does
}

// ContentSummary returns the aggregates of path's subtree without walking
// it: every directory keeps them up to date.
//
// A directory needs read and search permission on it and on every
// non-empty directory below, as in HDFS: a superuser's summary costs a
// lookup, anyone else's walks the subtree's directories (checkSubtree).
func (fs *FS) ContentSummary(r kv.Reader, c Caller, ns, path string) (Summary, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err == nil && res.node.IsDir() && !fs.check(c, res.node, accessRead|accessExec) {
		err = ErrPermission
	}
	if err == nil && res.node.IsDir() {
		var ok bool
		if ok, err = fs.checkSubtree(r, c, res.node, accessRead|accessExec); err == nil && !ok {
			err = ErrPermission
		}
	}
	if err != nil {
		return Summary{}, pathErr("contentSummary", path, err)
	}
	n := res.node
	if !n.IsDir() {
		return Summary{Length: n.Length, Files: 1}, nil
	}
	return Summary{Length: n.SubLength, Files: n.SubFiles, Dirs: n.SubDirs + 1}, nil
}
