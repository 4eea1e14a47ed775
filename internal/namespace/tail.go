package namespace

import (
	"errors"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/storagepolicy"
)

// A file being written becomes visible, and durable, before it is closed
// by flushes (hflush, hsync): each commits the blocks its writer's workers
// finished since the last, and the bytes after them (its tail), which the
// state keeps (0x0D keys) until a block holds them. The file's Length is
// then its visible length: its blocks cover [0, blocksEnd) and its tail
// [blocksEnd, Length). Complete, and lease recovery (which makes the tail
// a block first), leave no tail behind.

// FlushOptions are the arguments of Flush.
type FlushOptions struct {
	Inode  uint64
	Holder string
	// Blocks finished since the last flush, from the end of the committed
	// blocks, contiguous.
	Blocks []kvschema.Block
	// TailOffset and TailData are the bytes written after what was
	// flushed before; TailOffset is the larger of the file's length and
	// the end of its blocks.
	TailOffset uint64
	TailData   []byte
}

// Flushed is what a flush did: the file's visible length now, and its
// effective storage policy, for the token of the writer's next blocks.
type Flushed struct {
	Length uint64
	Policy storagepolicy.ID
}

// Flush commits what the holder of path's lease wrote so far.
func (fs *FS) Flush(tx kv.Txn, now int64, c Caller, ns, path string, o FlushOptions) (Flushed, error) {
	res, err := fs.resolveHeld(tx, c, ns, path, o.Inode, o.Holder)
	var f Flushed
	if err == nil {
		f.Length, err = fs.flush(tx, now, res, o)
	}
	if err == nil {
		f.Policy, err = policyOf(tx, res)
	}
	if err != nil {
		return Flushed{}, pathErr("flush", path, err)
	}
	return f, nil
}

func (fs *FS) flush(tx kv.Txn, now int64, res *resolved, o FlushOptions) (uint64, error) {
	n := res.node
	switch {
	case n.IsDir():
		return 0, ErrIsDir
	case res.ns.IsCache():
		return 0, ErrUnsupported
	case n.ID != o.Inode || n.Holder == "" || n.Holder != o.Holder:
		return 0, ErrNoLease
	}
	end, err := appendBlocks(tx, n, o.Blocks)
	if err != nil {
		return 0, err
	}
	if len(o.TailData) > 0 {
		if o.TailOffset != max(n.Length, end) {
			return 0, ErrInvalidArgument
		}
		tx.Set(kvschema.TailKey(n.ID, o.TailOffset), o.TailData)
	}
	length := max(n.Length, end, o.TailOffset+uint64(len(o.TailData)))
	// Only new blocks cover chunks of the tail: a flush without blocks
	// (most of an hflushed log's) has none to drop, and skips the scan,
	// which over the members' unsynced hflushes (kv.Overlay) is dearer
	// than the rest of the flush.
	if len(o.Blocks) > 0 {
		if err := dropTail(tx, n.ID, end); err != nil {
			return 0, err
		}
	}
	grown := int64(length) - int64(n.Length)
	n.Length, n.Mtime = length, now
	putInode(tx, n)
	return length, adjust(tx, n.Parent, 0, 0, delta{length: grown})
}

// blocksEnd is where file n's committed blocks end.
func blocksEnd(r kv.Reader, n *kvschema.Inode) (uint64, error) {
	if n.Blocks == 0 {
		return 0, nil
	}
	v, ok, err := r.Get(kvschema.BlockKey(n.ID, n.Blocks-1))
	if err != nil || !ok {
		return 0, orErr(err, kvschema.ErrCorrupt)
	}
	b, err := kvschema.DecodeBlock(v)
	return b.Offset + b.Length, err
}

// appendBlocks adds blocks after file n's committed ones, which they must
// continue without a gap, and returns where the blocks end now.
func appendBlocks(tx kv.Txn, n *kvschema.Inode, blocks []kvschema.Block) (uint64, error) {
	end, err := blocksEnd(tx, n)
	if err != nil {
		return 0, err
	}
	for _, b := range blocks {
		if b.Offset != end || b.Length == 0 {
			return 0, ErrInvalidArgument
		}
		tx.Set(kvschema.BlockKey(n.ID, n.Blocks), kvschema.EncodeBlock(b))
		n.Blocks++
		end += b.Length
	}
	return end, nil
}

// dropTail removes the tail chunks of file ino that end at or before end
// (a block holds them now); end of ^0 removes them all.
func dropTail(tx kv.Txn, ino, end uint64) error {
	start, stop := kvschema.TailRange(ino)
	var gone [][]byte
	var derr error
	err := tx.Scan(start, stop, func(k, v []byte) bool {
		var off uint64
		if off, derr = kvschema.TailOffset(k); derr != nil {
			return false
		}
		if off+uint64(len(v)) > end {
			return false // chunks are in offset order: the rest end later
		}
		gone = append(gone, append([]byte(nil), k...))
		return true
	})
	for _, k := range gone {
		tx.Delete(k)
	}
	return errors.Join(err, derr)
}

// ReadTail returns up to length bytes at off of path's flushed tail; none
// if off is past the file's length, or no longer in its tail (a block holds
// it now: the reader opens the file again).
func (fs *FS) ReadTail(r kv.Reader, c Caller, ns, path string, ino, off, length uint64) ([]byte, error) {
	b, err := fs.readTail(r, c, ns, path, ino, off, length)
	if err != nil {
		return nil, pathErr("readTail", path, err)
	}
	return b, nil
}

func (fs *FS) readTail(r kv.Reader, c Caller, ns, path string, ino, off, length uint64) ([]byte, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return nil, err
	}
	n := res.node
	switch {
	case n.IsDir():
		return nil, ErrIsDir
	case ino != 0 && n.ID != ino:
		return nil, ErrNotFound // replaced since it was opened
	case !fs.check(c, n, accessRead):
		return nil, ErrPermission
	}
	end, err := blocksEnd(r, n)
	if err != nil {
		return nil, err
	}
	if n.Inline || off < end {
		// NB: a block holds these bytes now (a flush or close came after
		// the reader's open): nothing, so that the reader opens the file
		// again, rather than a hole in the tail taken for corruption.
		return nil, nil
	}
	return tailBytes(r, n, off, min(n.Length, off+length))
}

// tailBytes returns the bytes [off, end) of file n's flushed tail.
func tailBytes(r kv.Reader, n *kvschema.Inode, off, end uint64) ([]byte, error) {
	if off >= end {
		return nil, nil
	}
	out := make([]byte, 0, end-off)
	start, stop := kvschema.TailRange(n.ID)
	var derr error
	err := r.Scan(start, stop, func(k, v []byte) bool {
		var at uint64
		if at, derr = kvschema.TailOffset(k); derr != nil {
			return false
		}
		pos := off + uint64(len(out))
		if at+uint64(len(v)) <= pos {
			return true
		}
		if at > pos {
			derr = kvschema.ErrCorrupt // a hole in the tail
			return false
		}
		out = append(out, v[pos-at:min(uint64(len(v)), end-at)]...)
		return off+uint64(len(out)) < end
	})
	if err = errors.Join(err, derr); err != nil {
		return nil, err
	}
	if off+uint64(len(out)) != end {
		return nil, kvschema.ErrCorrupt
	}
	return out, nil
}

// OpenTail returns file ino as the state holds it, where its blocks end,
// and its flushed tail after them (up to its length): what the leader
// makes a block of before lease recovery closes the file. No tail gives
// nil data.
func OpenTail(r kv.Reader, ino uint64) (*kvschema.Inode, uint64, []byte, error) {
	n, err := getInode(r, ino)
	if err != nil {
		return nil, 0, nil, err
	}
	end, err := blocksEnd(r, n)
	if err != nil || n.Inline || n.Length <= end {
		return n, end, nil, err
	}
	data, err := tailBytes(r, n, end, n.Length)
	return n, end, data, err
}

// Append reopens closed file path for writing by holder, at its end, and
// returns it with the bytes its writer must write again before what it
// appends: the content of a file stored inline, which becomes the file's
// tail until the writer's first block holds it. The inode's Policy is the
// file's effective storage policy, as Create's.
func (fs *FS) Append(tx kv.Txn, now int64, c Caller, ns, path, holder string) (*kvschema.Inode, []byte, error) {
	n, again, err := fs.append(tx, now, c, ns, path, holder)
	if err != nil {
		return nil, nil, pathErr("append", path, err)
	}
	return n, again, nil
}

func (fs *FS) append(tx kv.Txn, now int64, c Caller, ns, path, holder string) (*kvschema.Inode, []byte, error) {
	res, err := fs.resolveExisting(tx, c, ns, path)
	if err != nil {
		return nil, nil, err
	}
	n := res.node
	switch {
	case !validHolder(holder):
		return nil, nil, ErrInvalidArgument
	case n.IsDir():
		return nil, nil, ErrIsDir
	case res.ns.IsCache():
		return nil, nil, ErrUnsupported
	case n.Holder != "":
		return nil, nil, ErrLeaseConflict
	case !fs.check(c, n, accessWrite):
		return nil, nil, ErrPermission
	}
	if err := checkSpaceLeft(tx, res.dirs); err != nil {
		return nil, nil, err
	}
	var again []byte
	if n.Inline {
		v, ok, err := tx.Get(kvschema.InlineKey(n.ID))
		if err != nil || !ok {
			return nil, nil, orErr(err, kvschema.ErrCorrupt)
		}
		again = append([]byte(nil), v...)
		tx.Delete(kvschema.InlineKey(n.ID))
		tx.Set(kvschema.TailKey(n.ID, 0), again)
		n.Inline = false
	}
	n.Holder, n.Mtime = holder, now
	tx.Set(kvschema.LeaseKey(holder, n.ID), nil)
	putInode(tx, n)
	n.Policy = uint8(effectivePolicy(n, res.dirs)) // as Create's answer
	return n, again, nil
}

// Truncate cuts closed file path to length, which is at most its own.
// Blocks past it go to the garbage queue; the block it falls in is kept,
// its readers reading only up to the cut.
func (fs *FS) Truncate(tx kv.Txn, now int64, c Caller, ns, path string, length uint64) error {
	if err := fs.truncate(tx, now, c, ns, path, length); err != nil {
		return pathErr("truncate", path, err)
	}
	return nil
}

func (fs *FS) truncate(tx kv.Txn, now int64, c Caller, ns, path string, length uint64) error {
	res, err := fs.resolveExisting(tx, c, ns, path)
	if err != nil {
		return err
	}
	n := res.node
	switch {
	case n.IsDir():
		return ErrIsDir
	case res.ns.IsCache():
		return ErrUnsupported
	case n.Holder != "":
		return ErrLeaseConflict
	case !fs.check(c, n, accessWrite):
		return ErrPermission
	case length > n.Length:
		return ErrInvalidArgument
	}
	if n.Inline {
		v, ok, err := tx.Get(kvschema.InlineKey(n.ID))
		if err != nil || !ok {
			return orErr(err, kvschema.ErrCorrupt)
		}
		if length == 0 {
			tx.Delete(kvschema.InlineKey(n.ID))
			n.Inline = false
		} else {
			tx.Set(kvschema.InlineKey(n.ID), append([]byte(nil), v[:length]...))
		}
	} else if err := cutBlocks(tx, n, length, blockStore(res.ns)); err != nil {
		return err
	}
	shrunk := int64(length) - int64(n.Length)
	n.Length, n.Mtime = length, now
	putInode(tx, n)
	return adjust(tx, n.Parent, 0, 0, delta{length: shrunk})
}

// cutBlocks drops file n's blocks past length (to the garbage queue of
// bucket uri) and shortens the one it falls in.
func cutBlocks(tx kv.Txn, n *kvschema.Inode, length uint64, uri string) error {
	bl, err := fileBlocks(tx, n)
	if err != nil {
		return err
	}
	keep := uint32(0)
	for i, b := range bl {
		switch {
		case b.Offset >= length:
			tx.Delete(kvschema.BlockKey(n.ID, uint32(i)))
			tx.Set(kvschema.GarbageKey(b.Owner(n.ID), b.ID), kvschema.EncodeGarbage(kvschema.Garbage{StoreURI: uri, Block: b}))
		case b.Offset+b.Length > length:
			b.Length = length - b.Offset
			tx.Set(kvschema.BlockKey(n.ID, uint32(i)), kvschema.EncodeBlock(b))
			keep++
		default:
			keep++
		}
	}
	n.Blocks = keep
	return nil
}

// resolveHeld finds the file that holder writes, inode ino: at path, or,
// when path no longer names it, wherever it is in namespace ns. HDFS lets a
// file being written be renamed, and its writer follows it: its flushes and
// its close reach the file at its new path (the lease proves the writer).
func (fs *FS) resolveHeld(r kv.Reader, c Caller, ns, path string, ino uint64, holder string) (*resolved, error) {
	res, err := fs.resolveExisting(r, c, ns, path)
	if err == nil && res.node.ID == ino || err != nil && !errors.Is(err, ErrNotFound) || ino == 0 || holder == "" {
		return res, err
	}
	n, nerr := getInode(r, ino)
	if nerr != nil || n.IsDir() || n.Holder != holder {
		return res, err // the path's own answer
	}
	rec, nerr := getNamespace(r, ns)
	if nerr != nil {
		return nil, nerr
	}
	if root, rerr := rootOf(r, ino); rerr != nil || root != rec.Root {
		return res, err
	}
	return &resolved{ns: rec, node: n}, nil
}

// rootOf returns the root of the tree that inode ino is in; ErrNotFound if
// it is gone.
func rootOf(r kv.Reader, ino uint64) (uint64, error) {
	for {
		v, ok, err := r.Get(kvschema.InodeKey(ino))
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, ErrNotFound
		}
		n, err := kvschema.DecodeInode(v)
		if err != nil {
			return 0, err
		}
		if n.Parent == 0 {
			return ino, nil
		}
		ino = n.Parent
	}
}

// NamespaceOf names the namespace that inode ino is in; ErrNotFound if it
// is in none (gone, or in a deleted subtree awaiting purge).
func NamespaceOf(r kv.Reader, ino uint64) (string, error) {
	ino, err := rootOf(r, ino)
	if err != nil {
		return "", err
	}
	list, err := Namespaces(r)
	if err != nil {
		return "", err
	}
	for _, ns := range list {
		if ns.Root == ino {
			return ns.Name, nil
		}
	}
	return "", ErrNotFound
}
