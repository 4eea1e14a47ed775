package namespace

import (
	"errors"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// DefaultNamespace is the namespace of bare paths.
const DefaultNamespace = "default"

// Config holds the settings that affect the result of operations. Every
// replica must apply a command with the same Config: the leader's, which
// it stamps on each command.
type Config struct {
	Superuser   string // HDFS's "dfs.cluster.administrators" user; bypasses checks
	Supergroup  string // members bypass checks too
	InlineLimit int    // largest file content stored in its inode
	BlockSize   uint64 // block size of files whose creator sets none
	// NamespaceTrash is how long, in milliseconds, a deleted namespace
	// that held anything stays in the trash, restorable; 0 removes it at
	// once.
	NamespaceTrash int64
}

// DefaultNamespaceTrash is how long a deleted namespace stays restorable
// unless the service is told otherwise: a day.
const DefaultNamespaceTrash = 24 * 60 * 60 * 1000

// DefaultConfig returns the defaults for superuser.
func DefaultConfig(superuser string) Config {
	return Config{Superuser: superuser, Supergroup: "supergroup", InlineLimit: 4096, BlockSize: DefaultBlockSize,
		NamespaceTrash: DefaultNamespaceTrash}
}

// FS runs namespace operations. It holds no state besides its Config; all
// state lives in the transaction passed to each call. Safe for concurrent use.
type FS struct {
	cfg Config
}

// New returns an FS with cfg.
func New(cfg Config) *FS { return &FS{cfg: cfg} }

// Config returns the FS's configuration.
func (fs *FS) Config() Config { return fs.cfg }

// resolved is a path looked up as far as it goes.
type resolved struct {
	ns     *kvschema.Namespace
	parts  []string
	parent *kvschema.Inode // directory holding the last component; nil for the root
	node   *kvschema.Inode // the inode at the path; nil if it does not exist
	// dirs are the directories passed, the root first and parent last, as
	// read: a caller that changed them since only through link and unlink
	// may hand them to those, which update them in place instead of reading
	// them again.
	dirs []*kvschema.Inode
}

// resolve looks path up in namespace ns, checking traverse permission on
// every directory it passes. A missing last component is not an error
// (node is nil); a missing or non-directory ancestor is.
func (fs *FS) resolve(r kv.Reader, c Caller, ns, path string) (*resolved, error) {
	parts, err := SplitPath(path)
	if err != nil {
		return nil, err
	}
	rec, err := getNamespace(r, ns)
	if err != nil {
		return nil, err
	}
	root, err := getInode(r, rec.Root)
	if err != nil {
		return nil, err
	}
	res := &resolved{ns: rec, parts: parts, node: root, dirs: make([]*kvschema.Inode, 0, len(parts))}
	for _, name := range parts {
		dir := res.node
		if dir == nil {
			return nil, ErrNotFound
		}
		if !dir.IsDir() {
			return nil, ErrParentNotDir
		}
		if !fs.check(c, dir, accessExec) {
			return nil, ErrPermission
		}
		res.parent = dir
		res.dirs = append(res.dirs, dir)
		res.node, err = lookup(r, dir.ID, name)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// resolveExisting is resolve for operations on an existing path; reads
// report a path under a file as missing, as HDFS does.
func (fs *FS) resolveExisting(r kv.Reader, c Caller, ns, path string) (*resolved, error) {
	res, err := fs.resolve(r, c, ns, path)
	if errors.Is(err, ErrParentNotDir) {
		return nil, ErrNotFound
	}
	if err == nil && res.node == nil {
		return nil, ErrNotFound
	}
	return res, err
}

// getNamespace returns the record of live namespace name: one in the
// trash is no namespace to the file system's operations.
func getNamespace(r kv.Reader, name string) (*kvschema.Namespace, error) {
	rec, err := getNamespaceRecord(r, name)
	if err == nil && rec.InTrash() {
		return nil, ErrNoNamespace
	}
	return rec, err
}

// getNamespaceRecord returns the record of namespace name, in the trash or
// not.
func getNamespaceRecord(r kv.Reader, name string) (*kvschema.Namespace, error) {
	if name == "" {
		name = DefaultNamespace
	}
	v, ok, err := r.Get(kvschema.NamespaceKey(name))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoNamespace
	}
	return kvschema.DecodeNamespace(v)
}

// lookup returns the child called name of dir, or nil if there is none.
func lookup(r kv.Reader, dir uint64, name string) (*kvschema.Inode, error) {
	v, ok, err := r.Get(kvschema.DentryKey(dir, name))
	if err != nil || !ok {
		return nil, err
	}
	d, err := kvschema.DecodeDentry(v)
	if err != nil {
		return nil, err
	}
	return getInode(r, d.Child)
}

func getInode(r kv.Reader, ino uint64) (*kvschema.Inode, error) {
	v, ok, err := r.Get(kvschema.InodeKey(ino))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, kvschema.ErrCorrupt // a dentry or parent points to nothing
	}
	return kvschema.DecodeInode(v)
}

func putInode(tx kv.Txn, n *kvschema.Inode) {
	tx.Set(kvschema.InodeKey(n.ID), kvschema.EncodeInode(n))
}

// link adds n as child n.Name of dir, counts it in dir and its ancestors and
// sets dir's modification time to now. dirs, if given, are dir and its
// ancestors (see adjust).
func link(tx kv.Txn, now int64, dir uint64, n *kvschema.Inode, dirs ...*kvschema.Inode) error {
	return linkBelow(tx, now, dir, n, 0, dirs...)
}

// linkBelow is link for a rename, whose entry leaves directory common and
// its ancestors as they were: their quotas are not checked (as HDFS's
// verifyQuotaForRename), so that a rename inside a directory over its
// quota (one set below what it held) still goes. 0 checks every quota.
func linkBelow(tx kv.Txn, now int64, dir uint64, n *kvschema.Inode, common uint64, dirs ...*kvschema.Inode) error {
	n.Parent = dir
	tx.Set(kvschema.DentryKey(dir, n.Name), kvschema.EncodeDentry(kvschema.Dentry{Child: n.ID, Type: n.Type}))
	putInode(tx, n)
	d := contribution(n)
	d.unchecked = common
	return adjust(tx, dir, now, +1, d, dirs...)
}

// unlink removes n from its directory, uncounts it there and in the
// ancestors and sets the directory's modification time to now. The inode
// itself stays; the caller drops or relinks it. dirs, if given, are n's
// directory and its ancestors (see adjust).
func unlink(tx kv.Txn, now int64, n *kvschema.Inode, dirs ...*kvschema.Inode) error {
	tx.Delete(kvschema.DentryKey(n.Parent, n.Name))
	return adjust(tx, n.Parent, now, -1, contribution(n).neg(), dirs...)
}

// delta is what a subtree adds to its ancestors' aggregates. The quotas of
// the ancestors it grows are checked (checkQuota), up to but not including
// directory unchecked and those above it (0: all of them).
type delta struct {
	files, dirs, length int64
	unchecked           uint64
}

func (d delta) neg() delta { return delta{files: -d.files, dirs: -d.dirs, length: -d.length} }

func contribution(n *kvschema.Inode) delta {
	if n.IsDir() {
		return delta{files: int64(n.SubFiles), dirs: int64(n.SubDirs) + 1, length: int64(n.SubLength)}
	}
	return delta{files: 1, length: int64(n.Length)}
}

// adjust adds children to directory dir's entry count and d to the
// aggregates of dir and every ancestor up to the namespace root. A non-zero
// mtime becomes dir's modification time.
//
// dirs, if given, are the ancestors as the caller read them, root first
// and dir last (resolved.dirs), changed in tx since by adjust alone: adjust
// updates them in place instead of reading and decoding each again (four
// inodes of a create three levels down), so that they stay current for
// the next adjust. An ancestor not among them is read.
//
// A directory with a quota that d grows is checked against it (quota.go);
// a failure leaves the writes made so far for the caller to discard, as
// every failed operation's.
func adjust(tx kv.Txn, dir uint64, mtime, children int64, d delta, dirs ...*kvschema.Inode) error {
	i := len(dirs) - 1
	check := d.grows()
	for id := dir; id != 0; {
		var n *kvschema.Inode
		if i >= 0 && dirs[i].ID == id {
			n, i = dirs[i], i-1
		} else {
			var err error
			if n, err = getInode(tx, id); err != nil {
				return err
			}
			i = -1
		}
		if id == dir {
			n.Children = uint64(int64(n.Children) + children)
			if mtime != 0 {
				n.Mtime = mtime
			}
		}
		n.SubFiles = uint64(int64(n.SubFiles) + d.files)
		n.SubDirs = uint64(int64(n.SubDirs) + d.dirs)
		n.SubLength = uint64(int64(n.SubLength) + d.length)
		if check = check && id != d.unchecked; check && n.Quota != nil {
			if err := checkQuota(tx, n, d); err != nil {
				return err
			}
		}
		putInode(tx, n)
		id = n.Parent
	}
	return nil
}

// nextID allocates an inode id from the counter kept in the state, so that
// every replica allocates the same ids.
func nextID(tx kv.Txn) (uint64, error) {
	v, ok, err := tx.Get(kvschema.NextIDKey)
	if err != nil {
		return 0, err
	}
	id := uint64(1)
	if ok {
		vs, err := kvschema.DecodeUint64s(v, 1)
		if err != nil {
			return 0, err
		}
		id = vs[0]
	}
	tx.Set(kvschema.NextIDKey, kvschema.EncodeUint64s(id+1))
	return id, nil
}
