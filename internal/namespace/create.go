package namespace

import (
	"cmp"
	"errors"
	"strings"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Defaults for files whose creator leaves them unset. DefaultBlockSize is
// the one default of a file's block size: clients send none unless their
// user asked for one, and workers cut writes by the size the file carries.
const (
	DefaultBlockSize   = 64 << 20
	DefaultReplication = 1
	maxReplication     = 512
)

// CreateOptions are the arguments of Create.
type CreateOptions struct {
	Perm, Umask uint16
	Overwrite   bool   // replace an existing file (never a directory)
	Parents     bool   // create missing parents; false is createNonRecursive
	Replication uint32 // 0 means DefaultReplication
	BlockSize   uint64 // 0 means the Config's
	Holder      string // the client that will write the file and hold its lease
	// Closed creates the file complete, holding Data inline (at most the
	// inline limit), with no lease: a whole small file in one command.
	Closed bool
	Data   []byte
	// ETag, in cache mode and only there, is the version of the object
	// the service wrote with Data for a closed create; the file's content
	// is that object, not Data.
	ETag string
}

// Create creates an empty file open for writing by o.Holder, who holds its
// lease until Complete; or, with o.Closed, a closed file holding o.Data.
// An overwritten file's content is released at once. The inode returned
// has the file's effective storage policy as its Policy (the record keeps
// none: the file takes its directory's).
func (fs *FS) Create(tx kv.Txn, now int64, c Caller, ns, path string, o CreateOptions) (*kvschema.Inode, error) {
	n, err := fs.create(tx, now, c, ns, path, o)
	if err != nil {
		return nil, pathErr("create", path, err)
	}
	return n, nil
}

func (fs *FS) create(tx kv.Txn, now int64, c Caller, ns, path string, o CreateOptions) (*kvschema.Inode, error) {
	if !validHolder(o.Holder) || o.Replication > maxReplication ||
		o.BlockSize != 0 && blocks.CheckSize(o.BlockSize) != nil ||
		len(o.Data) > 0 && (!o.Closed || len(o.Data) > fs.cfg.InlineLimit) {
		return nil, ErrInvalidArgument
	}
	res, err := fs.resolve(tx, c, ns, path)
	if errors.Is(err, ErrNotFound) && o.Parents {
		parent := JoinPath(mustSplit(path)[:len(mustSplit(path))-1])
		// Like HDFS, every parent created here grants its owner write and
		// search, whatever the umask, so that the file can go in.
		if _, err = fs.mkdirs(tx, now, c, ns, parent, 0o777, o.Umask&^0o300, true); err == nil {
			res, err = fs.resolve(tx, c, ns, path)
		}
	}
	if err != nil {
		return nil, err
	}
	if res.ns.IsCache() != (o.ETag != "") && (o.Closed || o.ETag != "") {
		return nil, ErrInvalidArgument // a cache-mode object's version comes with its closed create
	}
	if res.parent == nil {
		return nil, ErrIsDir // the root
	}
	if !fs.check(c, res.parent, accessWrite|accessExec) {
		return nil, ErrPermission
	}
	if old := res.node; old != nil {
		if err := fs.replaceable(c, res.parent, old, o.Overwrite); err != nil {
			return nil, err
		}
		if err := unlink(tx, now, old, res.dirs...); err != nil {
			return nil, err
		}
		if err := dropFile(tx, old, blockStore(res.ns)); err != nil {
			return nil, err
		}
	}
	n, err := fs.newInode(tx, now, c, res.parent, res.parts[len(res.parts)-1], kvschema.TypeFile,
		createMode{o.Perm &^ o.Umask & 0o7777, o.Perm & 0o7777})
	if err != nil {
		return nil, err
	}
	n.Replication = cmp.Or(o.Replication, DefaultReplication)
	n.BlockSize = cmp.Or(o.BlockSize, fs.cfg.BlockSize, DefaultBlockSize)
	switch {
	case !o.Closed:
		n.Holder = o.Holder
		tx.Set(kvschema.LeaseKey(n.Holder, n.ID), nil)
	case o.ETag != "":
		n.Length = uint64(len(o.Data))
		putObjectState(tx, n.ID, kvschema.ObjectState{ETag: o.ETag, Synced: now})
	case len(o.Data) > 0:
		n.Length, n.Inline = uint64(len(o.Data)), true
		tx.Set(kvschema.InlineKey(n.ID), o.Data)
	}
	if err := link(tx, now, res.parent.ID, n, res.dirs...); err != nil {
		return nil, err
	}
	// NB: the answer's inode carries the file's effective storage policy,
	// which its record does not (it takes its directory's): what its
	// writer's block token says.
	n.Policy = uint8(effectivePolicy(nil, res.dirs))
	return n, nil
}

// replaceable says whether create may replace old.
func (fs *FS) replaceable(c Caller, dir, old *kvschema.Inode, overwrite bool) error {
	switch {
	case old.IsDir():
		return ErrIsDir
	case old.Holder != "":
		// Before ErrExists: HDFS answers AlreadyBeingCreatedException to a
		// create without overwrite of an open file, and clients (HBase's
		// lock files) rely on telling the two apart.
		return ErrLeaseConflict
	case !overwrite:
		return ErrExists
	case !fs.check(c, old, accessWrite) || !fs.checkSticky(c, dir, old):
		return ErrPermission
	}
	return nil
}

func validHolder(h string) bool {
	return h != "" && len(h) <= MaxNameLen && !strings.Contains(h, "\x00")
}

func mustSplit(path string) []string {
	parts, _ := SplitPath(path)
	return parts
}

// CompleteOptions are the arguments of Complete: what the writer wrote.
type CompleteOptions struct {
	Inode  uint64 // the file the writer created
	Holder string
	Length uint64
	Blocks []kvschema.Block // contiguous from offset 0, covering Length
	Inline bool             // the content is Data, stored in the inode
	Data   []byte
	// ETag, in cache mode and only there, is the version of the object
	// holding the content, which the service found in the bucket: no
	// blocks, no inline content.
	ETag string
}

// Complete closes a file its holder has written: it records the content and
// releases the lease. The file's new length becomes visible at once. A file
// renamed since its writer opened it is closed where it is now.
func (fs *FS) Complete(tx kv.Txn, now int64, c Caller, ns, path string, o CompleteOptions) error {
	res, err := fs.resolveHeld(tx, c, ns, path, o.Inode, o.Holder)
	if err == nil && res.ns.IsCache() != (o.ETag != "") {
		err = ErrInvalidArgument
	}
	if err == nil {
		err = fs.complete(tx, now, res.node, o)
	}
	if err != nil {
		return pathErr("complete", path, err)
	}
	return nil
}

func (fs *FS) complete(tx kv.Txn, now int64, n *kvschema.Inode, o CompleteOptions) error {
	if n.IsDir() {
		return ErrIsDir
	}
	if n.ID != o.Inode || n.Holder == "" || n.Holder != o.Holder {
		return ErrNoLease
	}
	if err := checkContent(o, fs.cfg.InlineLimit, n.Blocks); err != nil {
		return err
	}
	if o.ETag != "" {
		putObjectState(tx, n.ID, kvschema.ObjectState{ETag: o.ETag, Synced: now})
	}
	if o.Inline && o.Length > 0 {
		tx.Set(kvschema.InlineKey(n.ID), o.Data)
		n.Inline = true
	}
	// The blocks continue those a flush (or an earlier writer, for an
	// append) committed; they then hold the whole file, tail included.
	end, err := appendBlocks(tx, n, o.Blocks)
	if err != nil {
		return err
	}
	if !n.Inline && o.ETag == "" && end != o.Length {
		return ErrInvalidArgument
	}
	if n.Length > 0 {
		// Only a flushed or appended file (never a fresh one) may have a tail.
		if err := dropTail(tx, n.ID, ^uint64(0)); err != nil {
			return err
		}
	}
	grown := int64(o.Length) - int64(n.Length)
	n.Length, n.Mtime = o.Length, now
	return closeFile(tx, n, grown)
}

// checkContent checks what a writer says it wrote to a file that has
// committed blocks already (flushed, or appended to).
func checkContent(o CompleteOptions, inlineLimit int, committed uint32) error {
	switch {
	case o.ETag != "":
		if o.Inline || len(o.Blocks) > 0 || len(o.Data) > 0 {
			return ErrInvalidArgument
		}
	case o.Inline:
		if len(o.Blocks) > 0 || committed > 0 || uint64(len(o.Data)) != o.Length || len(o.Data) > inlineLimit {
			return ErrInvalidArgument
		}
	case len(o.Data) > 0:
		return ErrInvalidArgument
	}
	return nil
}

// closeFile releases n's lease and writes it; grown is what its length
// changed by, for the ancestors' aggregates. A file closed at the length
// it had (an empty file's close, Hadoop's create then close) leaves its
// ancestors as they are: adjust would write each back unchanged, four
// inodes of a file three levels down, more than the close's own writes.
func closeFile(tx kv.Txn, n *kvschema.Inode, grown int64) error {
	tx.Delete(kvschema.LeaseKey(n.Holder, n.ID))
	n.Holder = ""
	putInode(tx, n)
	if grown == 0 {
		return nil
	}
	return adjust(tx, n.Parent, 0, 0, delta{length: grown})
}

// RecoverLease closes a file left open by its writer at its last committed
// length, its flushed bytes included, as HDFS lease recovery does. A file
// with a flushed tail needs tail, the block the leader made of it (OpenTail);
// if the writer flushed more meanwhile, the file stays open and RecoverLease
// reports false, to be called again. It reports whether the file is closed.
func (fs *FS) RecoverLease(tx kv.Txn, now int64, c Caller, ns, path string, tail *kvschema.Block) (bool, error) {
	res, err := fs.resolveExisting(tx, c, ns, path)
	closed := true
	switch {
	case err != nil:
	case res.node.IsDir():
		err = ErrIsDir
	case !fs.check(c, res.node, accessWrite):
		err = ErrPermission
	case res.node.Holder != "" && res.ns.IsCache():
		// Its object never reached the bucket: the write did not happen.
		err = removeEntry(tx, now, res.ns, res.node)
	case res.node.Holder != "":
		closed, err = recoverFile(tx, res.node, res.ns.StoreURI, tail)
	}
	if err != nil {
		return false, pathErr("recoverLease", path, err)
	}
	return closed, nil
}

// recoverFile closes file n, whose writer left, at its visible length: its
// blocks, and tail, the block made of its flushed tail. It reports false,
// and changes nothing, when tail does not hold the tail as it is now.
func recoverFile(tx kv.Txn, n *kvschema.Inode, uri string, tail *kvschema.Block) (bool, error) {
	end, err := blocksEnd(tx, n)
	if err != nil {
		return false, err
	}
	if n.Length > end || tail != nil {
		if tail == nil || tail.Offset != end || tail.Offset+tail.Length != n.Length {
			return false, nil
		}
		if _, err := appendBlocks(tx, n, []kvschema.Block{*tail}); err != nil {
			return false, err
		}
		if err := dropTail(tx, n.ID, ^uint64(0)); err != nil {
			return false, err
		}
	}
	queueOrphanScan(tx, n.ID, uri)
	return true, closeFile(tx, n, 0)
}

// ExpireLease closes file ino if holder still writes it; the lease monitor
// calls it when holder stopped renewing. It is a no-op otherwise. tail is
// the block the leader made of the file's flushed tail, as RecoverLease's.
// A copy's temporary file (named with CopyingSuffix) is removed instead:
// its copier died before the rename that would have made it visible.
func (fs *FS) ExpireLease(tx kv.Txn, holder string, ino uint64, tail *kvschema.Block) error {
	v, ok, err := tx.Get(kvschema.InodeKey(ino))
	if err != nil || !ok {
		tx.Delete(kvschema.LeaseKey(holder, ino))
		return err
	}
	n, err := kvschema.DecodeInode(v)
	if err != nil {
		return err
	}
	if n.Holder != holder {
		tx.Delete(kvschema.LeaseKey(holder, ino))
		return nil
	}
	uri, err := storeOf(tx, n)
	if err != nil {
		return err
	}
	if uri == noBlocks || strings.HasSuffix(n.Name, CopyingSuffix) {
		// A cache-mode file, whose object never reached the bucket, or a
		// copy's temporary file: the write did not happen.
		if err := unlink(tx, 0, n); err != nil {
			return err
		}
		return dropFile(tx, n, uri)
	}
	_, err = recoverFile(tx, n, uri, tail)
	return err
}

// CopyingSuffix ends the name of the temporary file a copy writes and then
// renames into place (`fs -put` and `-cp`, here and in Hadoop's shell), so
// that a reader never sees half a file. A lease that expires on such a
// file removes it (ExpireLease), rather than leave it visible, closed.
const CopyingSuffix = "._COPYING_"

// storeOf returns the bucket URI of the blocks of n (blockStore: none in
// cache mode), found by walking up to its namespace's root, or to the root
// of the detached subtree holding it, whose purge-queue entry names the
// bucket.
func storeOf(r kv.Reader, n *kvschema.Inode) (string, error) {
	top := n
	for top.Parent != 0 {
		var err error
		if top, err = getInode(r, top.Parent); err != nil {
			return "", err
		}
	}
	if v, ok, err := r.Get(kvschema.PurgeKey(top.ID)); err != nil || ok {
		return string(v), err
	}
	list, err := Namespaces(r)
	if err != nil {
		return "", err
	}
	for _, ns := range list {
		if ns.Root == top.ID {
			return blockStore(ns), nil
		}
	}
	return "", kvschema.ErrCorrupt // an inode outside every tree
}

// Leases calls fn for every lease in r: holder writes file ino.
func Leases(r kv.Reader, fn func(holder string, ino uint64) bool) error {
	start, end := kvschema.LeaseRange("")
	var derr error
	err := r.Scan(start, end, func(k, _ []byte) bool {
		h, ino, err := kvschema.DecodeLeaseKey(k)
		if err != nil {
			derr = err
			return false
		}
		return fn(h, ino)
	})
	if err != nil {
		return err
	}
	return derr
}
