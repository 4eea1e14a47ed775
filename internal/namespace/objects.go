package namespace

import (
	"cmp"
	"errors"
	"strings"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Cache mode: a namespace whose files are the objects of its bucket, each
// at the key of its path. The state holds what the leader loaded from the
// bucket (SyncPath, SyncListing), each entry with its ObjectState; the
// service decides, by the namespace's sync interval, when that is too old
// and asks the bucket again. Entries made from the bucket belong to the
// namespace root's owner, with modes that let everyone in (0777 for
// directories, 0666 for files): the bucket's own policy is what guards its
// objects, as it is for every other S3 client.

// Modes of the entries a cache-mode namespace makes from its bucket.
const (
	bucketDirPerm  = 0o777
	bucketFilePerm = 0o666
)

// BucketEntry is what the bucket holds under one name: an object (a file)
// or a prefix or directory marker (a directory).
type BucketEntry struct {
	Name     string
	Dir      bool
	Size     uint64
	ETag     string
	Modified int64 // milliseconds since the epoch
}

// ObjectKey is the bucket key of path in a cache-mode namespace; a
// directory's marker is the key with a "/" appended.
func ObjectKey(path string) string { return strings.TrimPrefix(path, "/") }

// ValidBucketName reports whether a component of an object key can name an
// entry. Names the namespace refuses to create (see ValidName) are shown
// when the bucket has them, as long as the state can hold them: not empty,
// not "." or "..", without NUL, at most MaxNameLen bytes.
func ValidBucketName(c string) bool {
	return c != "" && c != "." && c != ".." && len(c) <= MaxNameLen && !strings.ContainsAny(c, "/\x00")
}

// CacheView is what the state knows of a path of a cache-mode namespace,
// for the service to decide whether to ask the bucket.
type CacheView struct {
	NS *kvschema.Namespace
	// Node is the entry at the path, nil if the state has none; State is
	// its ObjectState.
	Node  *kvschema.Inode
	State kvschema.ObjectState
	// ParentListed is when the path's parent directory was last listed
	// whole from the bucket (0: never, or the parent is not in the state):
	// a name missing from a fresh listing is known to be absent.
	ParentListed int64
	// StaleBefore is the latest Resync of the path or a directory above
	// it: what the bucket confirmed before it is not to be trusted.
	StaleBefore int64
}

// ViewCache returns what the state knows of path in namespace ns, without
// permission checks (the operation that follows checks them).
func (fs *FS) ViewCache(r kv.Reader, ns, path string) (*CacheView, error) {
	parts, err := SplitBucketPath(path)
	if err != nil {
		return nil, err
	}
	rec, err := getNamespace(r, ns)
	if err != nil {
		return nil, err
	}
	v := &CacheView{NS: rec}
	n, err := getInode(r, rec.Root)
	for _, name := range parts {
		if err != nil || !n.IsDir() {
			return v, err
		}
		st, err := objectState(r, n.ID)
		if err != nil {
			return nil, err
		}
		v.ParentListed, v.StaleBefore = st.Listed, max(v.StaleBefore, st.Stale)
		if n, err = lookup(r, n.ID, name); n == nil {
			return v, err
		}
	}
	if err != nil {
		return nil, err
	}
	v.Node = n
	if v.State, err = objectState(r, n.ID); err != nil {
		return nil, err
	}
	v.StaleBefore = max(v.StaleBefore, v.State.Stale)
	return v, nil
}

// SplitBucketPath is SplitPath for paths that may name what a bucket
// holds: components that ValidBucketName accepts.
func SplitBucketPath(p string) ([]string, error) {
	if len(p) == 0 || p[0] != '/' || len(p) > MaxPathLen {
		return nil, ErrInvalidPath
	}
	p = strings.TrimSuffix(p[1:], "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	if len(parts) > MaxDepth {
		return nil, ErrInvalidPath
	}
	for _, c := range parts {
		if !ValidBucketName(c) {
			return nil, ErrInvalidPath
		}
	}
	return parts, nil
}

func objectState(r kv.Reader, ino uint64) (kvschema.ObjectState, error) {
	v, ok, err := r.Get(kvschema.ObjectStateKey(ino))
	if err != nil || !ok {
		return kvschema.ObjectState{}, err
	}
	return kvschema.DecodeObjectState(v)
}

func putObjectState(tx kv.Txn, ino uint64, st kvschema.ObjectState) {
	tx.Set(kvschema.ObjectStateKey(ino), kvschema.EncodeObjectState(st))
}

// SyncPath records what the bucket held at path when the leader asked, at
// now: e, or nothing when e is nil. An entry the namespace's own writer
// holds open is left alone: its object is not in the bucket yet.
func (fs *FS) SyncPath(tx kv.Txn, now int64, ns, path string, e *BucketEntry) error {
	if err := fs.syncPath(tx, now, ns, path, e); err != nil {
		return pathErr("syncPath", path, err)
	}
	return nil
}

func (fs *FS) syncPath(tx kv.Txn, now int64, ns, path string, e *BucketEntry) error {
	parts, err := SplitBucketPath(path)
	if err != nil {
		return err
	}
	if len(parts) == 0 {
		return fs.markRoot(tx, ns, now)
	}
	rec, dir, err := fs.cacheDir(tx, now, ns, parts[:len(parts)-1], e != nil)
	if err != nil || dir == nil {
		return err
	}
	name := parts[len(parts)-1]
	if e == nil {
		return removeSynced(tx, now, rec, dir.ID, name)
	}
	e.Name = name
	return fs.upsertSynced(tx, now, rec, dir, *e)
}

// markRoot records that the bucket was asked about the root, which always
// exists.
func (fs *FS) markRoot(tx kv.Txn, ns string, now int64) error {
	rec, err := getNamespace(tx, ns)
	if err != nil {
		return err
	}
	st, err := objectState(tx, rec.Root)
	if err != nil {
		return err
	}
	st.Synced = now
	putObjectState(tx, rec.Root, st)
	return nil
}

// cacheDir returns the directory at parts of cache-mode namespace ns. With
// create, the directories missing on the way are made (an object below
// them implies them); without, a missing one gives nil. A file on the way
// gives nil: an object and a prefix of the same name are both in the
// bucket, and the object wins, as it does for S3A's getFileStatus.
func (fs *FS) cacheDir(tx kv.Txn, now int64, ns string, parts []string, create bool) (*kvschema.Namespace, *kvschema.Inode, error) {
	rec, err := getNamespace(tx, ns)
	if err != nil {
		return nil, nil, err
	}
	if !rec.IsCache() {
		return nil, nil, ErrInvalidArgument
	}
	dir, err := getInode(tx, rec.Root)
	for i := 0; err == nil && i < len(parts); i++ {
		var child *kvschema.Inode
		if child, err = lookup(tx, dir.ID, parts[i]); err != nil {
			break
		}
		switch {
		case child == nil && !create:
			return rec, nil, nil
		case child == nil:
			child, err = fs.bucketInode(tx, now, rec, dir, BucketEntry{Name: parts[i], Dir: true})
			if err == nil {
				err = link(tx, now, dir.ID, child)
			}
		case !child.IsDir():
			return rec, nil, nil
		}
		dir = child
	}
	return rec, dir, err
}

// bucketInode makes the inode of bucket entry e, to be linked into dir.
func (fs *FS) bucketInode(tx kv.Txn, now int64, rec *kvschema.Namespace, dir *kvschema.Inode, e BucketEntry) (*kvschema.Inode, error) {
	root, err := getInode(tx, rec.Root)
	if err != nil {
		return nil, err
	}
	typ, perm := kvschema.TypeFile, uint16(bucketFilePerm)
	if e.Dir {
		typ, perm = kvschema.TypeDir, bucketDirPerm
	}
	n, err := fs.newInode(tx, now, Caller{User: root.Owner}, dir, e.Name, typ, createMode{perm, perm})
	if err != nil {
		return nil, err
	}
	n.Group = root.Group
	if !e.Dir {
		n.Length, n.Replication, n.BlockSize = e.Size, DefaultReplication, cmp.Or(fs.cfg.BlockSize, DefaultBlockSize)
		n.Mtime, n.Atime = e.Modified, e.Modified
	}
	putObjectState(tx, n.ID, kvschema.ObjectState{ETag: e.ETag, Synced: now})
	return n, nil
}

// upsertSynced makes child e.Name of dir what bucket entry e says, as
// found at now.
func (fs *FS) upsertSynced(tx kv.Txn, now int64, rec *kvschema.Namespace, dir *kvschema.Inode, e BucketEntry) error {
	old, err := lookup(tx, dir.ID, e.Name)
	if err != nil {
		return err
	}
	if old != nil && old.Holder != "" {
		return nil // being written here: the bucket has the old version, if any
	}
	if old != nil && old.IsDir() == e.Dir {
		return refreshSynced(tx, now, old, e)
	}
	if old != nil {
		if err := removeSynced(tx, now, rec, dir.ID, e.Name); err != nil {
			return err
		}
	}
	n, err := fs.bucketInode(tx, now, rec, dir, e)
	if err != nil {
		return err
	}
	return link(tx, now, dir.ID, n)
}

// refreshSynced records that n is still what e says: a changed object's
// new length, time and version.
func refreshSynced(tx kv.Txn, now int64, n *kvschema.Inode, e BucketEntry) error {
	st, err := objectState(tx, n.ID)
	if err != nil {
		return err
	}
	changed := !n.IsDir() && (st.ETag != e.ETag || n.Length != e.Size)
	st.Synced = now
	if changed {
		st.ETag = e.ETag
		grown := int64(e.Size) - int64(n.Length)
		n.Length, n.Mtime = e.Size, e.Modified
		putInode(tx, n)
		if err := adjust(tx, n.Parent, 0, 0, delta{length: grown}); err != nil {
			return err
		}
	}
	putObjectState(tx, n.ID, st)
	return nil
}

// removeSynced removes child name of dir, which the bucket no longer has,
// unless it is being written here.
func removeSynced(tx kv.Txn, now int64, rec *kvschema.Namespace, dir uint64, name string) error {
	n, err := lookup(tx, dir, name)
	if err != nil || n == nil || n.Holder != "" {
		return err
	}
	return removeEntry(tx, now, rec, n)
}

// removeEntry removes entry n of cache-mode namespace rec, and what is
// below it.
func removeEntry(tx kv.Txn, now int64, rec *kvschema.Namespace, n *kvschema.Inode) error {
	if err := unlink(tx, now, n); err != nil {
		return err
	}
	return drop(tx, n, blockStore(rec))
}

// SyncListing records one page of directory path's listing from the
// bucket, taken at now. The last page also removes the children that the
// listing, started at start, did not show (and that are not being written
// here), and records the directory as listed at start.
func (fs *FS) SyncListing(tx kv.Txn, now int64, ns, path string, page []BucketEntry, start int64, last bool) error {
	if err := fs.syncListing(tx, now, ns, path, page, start, last); err != nil {
		return pathErr("syncListing", path, err)
	}
	return nil
}

func (fs *FS) syncListing(tx kv.Txn, now int64, ns, path string, page []BucketEntry, start int64, last bool) error {
	parts, err := SplitBucketPath(path)
	if err != nil {
		return err
	}
	rec, dir, err := fs.cacheDir(tx, now, ns, parts, true)
	if err != nil || dir == nil {
		return err
	}
	for _, e := range page {
		if !ValidBucketName(e.Name) {
			return ErrInvalidArgument
		}
		if err := fs.upsertSynced(tx, now, rec, dir, e); err != nil {
			return err
		}
	}
	if !last {
		return nil
	}
	if err := removeUnseen(tx, now, rec, dir.ID, start); err != nil {
		return err
	}
	st, err := objectState(tx, dir.ID)
	if err != nil {
		return err
	}
	st.Listed = start
	if st.Synced < start {
		st.Synced = start
	}
	putObjectState(tx, dir.ID, st)
	return nil
}

// removeUnseen removes the children of dir not confirmed by the bucket
// since start.
func removeUnseen(tx kv.Txn, now int64, rec *kvschema.Namespace, dir uint64, start int64) error {
	var gone []string
	startKey, endKey := kvschema.DentryRange(dir)
	var derr error
	err := tx.Scan(startKey, endKey, func(k, v []byte) bool {
		var d kvschema.Dentry
		var st kvschema.ObjectState
		if d, derr = kvschema.DecodeDentry(v); derr != nil {
			return false
		}
		if st, derr = objectState(tx, d.Child); derr != nil {
			return false
		}
		if st.Synced < start {
			var name string
			name, derr = kvschema.DentryName(k)
			gone = append(gone, name)
		}
		return derr == nil
	})
	if err = errors.Join(err, derr); err != nil {
		return err
	}
	for _, name := range gone {
		if err := removeSynced(tx, now, rec, dir, name); err != nil {
			return err
		}
	}
	return nil
}

// Resync makes everything the bucket confirmed at path and below it, up to
// now, too old to trust, so that the next access to each path asks the
// bucket again; it reports the entries below path as the state has them.
// It changes one record, whatever the subtree's size: ViewCache sees the
// mark on the way down.
func (fs *FS) Resync(tx kv.Txn, now int64, c Caller, ns, path string) (uint64, error) {
	n, err := fs.resync(tx, now, c, ns, path)
	if err != nil {
		return 0, pathErr("resync", path, err)
	}
	return n, nil
}

func (fs *FS) resync(tx kv.Txn, now int64, c Caller, ns, path string) (uint64, error) {
	if !fs.IsSuperuser(c) {
		return 0, ErrPermission
	}
	return fs.markStale(tx, now, ns, path)
}

// MarkStale is Resync on the service's own behalf, without permission
// checks; a missing path is not an error.
func (fs *FS) MarkStale(tx kv.Txn, now int64, ns, path string) error {
	_, err := fs.markStale(tx, now, ns, path)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return pathErr("markStale", path, err)
	}
	return nil
}

func (fs *FS) markStale(tx kv.Txn, now int64, ns, path string) (uint64, error) {
	res, err := fs.resolveExisting(tx, Caller{User: fs.cfg.Superuser}, ns, path)
	if err != nil {
		return 0, err
	}
	if !res.ns.IsCache() {
		return 0, ErrInvalidArgument
	}
	st, err := objectState(tx, res.node.ID)
	if err != nil {
		return 0, err
	}
	st.Stale = now
	putObjectState(tx, res.node.ID, st)
	if !res.node.IsDir() {
		return 1, nil
	}
	return 1 + res.node.SubFiles + res.node.SubDirs, nil
}

// noBlocks stands for the bucket of a cache-mode namespace where a block
// store's URI goes (drop, the purge queue): its files are the bucket's
// objects themselves and leave no blocks to collect.
const noBlocks = "cache:"

// objectContent fills content with what a reader of cache-mode file n, at
// parts, needs: its object and version, and the object cut into blocks of
// the file's block size.
func (fs *FS) objectContent(r kv.Reader, parts []string, n *kvschema.Inode, content *Content) error {
	st, err := objectState(r, n.ID)
	if err != nil {
		return err
	}
	if n.Holder != "" && st.ETag == "" {
		return nil // being written: nothing committed to read yet
	}
	content.ObjectKey, content.Version = strings.Join(parts, "/"), st.ETag
	size := cmp.Or(n.BlockSize, cmp.Or(fs.cfg.BlockSize, DefaultBlockSize))
	for i, off := uint64(0), uint64(0); off < n.Length; i, off = i+1, off+size {
		content.Blocks = append(content.Blocks, kvschema.Block{ID: blocks.ObjectBlockID(content.ObjectKey, st.ETag, i),
			Offset: off, Length: min(size, n.Length-off)})
	}
	return nil
}

// blockStore is the bucket URI under which the namespace keeps blocks, for
// the garbage queue; noBlocks in cache mode.
func blockStore(rec *kvschema.Namespace) string {
	if rec.IsCache() {
		return noBlocks
	}
	return rec.StoreURI
}
