package namespace

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// NamespaceNameRule says which names may name a namespace, for messages.
const NamespaceNameRule = "1 to 63 lower-case letters, digits, '-' and '_', starting with a letter or a digit"

// ValidNamespaceName reports whether name may name a namespace (see
// NamespaceNameRule), so that it can stand as the authority of a
// strata:// URI.
func ValidNamespaceName(name string) bool {
	if len(name) == 0 || len(name) > 63 {
		return false
	}
	for i, ch := range name {
		alnum := ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9'
		if !alnum && (i == 0 || ch != '-' && ch != '_') {
			return false
		}
	}
	return true
}

// CreateNamespace creates a namespace with an empty root directory owned by
// the caller, who must be a superuser. The name of a namespace in the trash
// is taken until the namespace is restored or removed for good.
func (fs *FS) CreateNamespace(tx kv.Txn, now int64, c Caller, info kvschema.Namespace) error {
	if err := fs.createNamespace(tx, now, c, info); err != nil {
		return pathErr("createNamespace", info.Name, err)
	}
	return nil
}

func (fs *FS) createNamespace(tx kv.Txn, now int64, c Caller, info kvschema.Namespace) error {
	if !fs.IsSuperuser(c) {
		return ErrPermission
	}
	if err := checkNewNamespace(info); err != nil {
		return err
	}
	switch rec, err := getNamespaceRecord(tx, info.Name); {
	case err == nil && rec.InTrash():
		return fserr.Errorf(ErrExists, "a deleted namespace of that name is in the trash until %s: restore it, or remove it for good first",
			Stamp(rec.PurgeAt))
	case err == nil:
		return ErrExists
	case !errors.Is(err, ErrNoNamespace):
		return err
	}
	id, err := nextID(tx)
	if err != nil {
		return err
	}
	perm := uint16(0o755)
	if info.IsCache() {
		perm = bucketDirPerm
	}
	putInode(tx, &kvschema.Inode{ID: id, Type: kvschema.TypeDir, Perm: perm, Owner: c.User,
		Group: fs.cfg.Supergroup, Mtime: now, Atime: now})
	info.Root, info.Created = id, now
	info.Deleted, info.PurgeAt = 0, 0
	tx.Set(kvschema.NamespaceKey(info.Name), kvschema.EncodeNamespace(&info))
	return nil
}

// checkNewNamespace checks the name and settings of a namespace to create.
func checkNewNamespace(info kvschema.Namespace) error {
	if !ValidNamespaceName(info.Name) {
		return fserr.Errorf(ErrInvalidArgument, "not a valid namespace name: a name is %s", NamespaceNameRule)
	}
	if info.SyncInterval < -1 || !info.IsCache() && info.SyncInterval != 0 {
		return fserr.Errorf(ErrInvalidArgument, "a sync interval is -1, 0 or a number of seconds, and for a cache-mode namespace only")
	}
	if info.Mode == 0 {
		return fserr.Errorf(ErrInvalidArgument, "no mode: a namespace is in block or cache mode")
	}
	return nil
}

// NamespaceDelete says what DeleteNamespace does with a namespace that
// holds anything. An empty one is removed at once whatever it says.
type NamespaceDelete uint8

const (
	// DeleteNow removes the namespace for good at once, with everything
	// in it (and a namespace in the trash).
	DeleteNow NamespaceDelete = iota
	// DeleteIfEmpty refuses, with ErrNotEmpty.
	DeleteIfEmpty
	// DeleteToTrash moves it to the trash for Config.NamespaceTrash, from
	// which RestoreNamespace brings it back (with a trash time of 0, it is
	// DeleteNow).
	DeleteToTrash
)

// DeleteNamespace deletes namespace name, as mode says, for c, who must be
// a superuser, and returns its root directory as it was: its aggregates say
// what the namespace held. A namespace removed for good has its content
// purged later, and its blocks queued as garbage; one in the trash keeps
// everything, and is no namespace to the file system's operations until it
// is restored.
func (fs *FS) DeleteNamespace(tx kv.Txn, now int64, c Caller, name string, mode NamespaceDelete) (*kvschema.Inode, error) {
	root, err := fs.deleteNamespace(tx, now, c, name, mode)
	if err != nil {
		return nil, pathErr("deleteNamespace", name, err)
	}
	return root, nil
}

func (fs *FS) deleteNamespace(tx kv.Txn, now int64, c Caller, name string, mode NamespaceDelete) (*kvschema.Inode, error) {
	rec, err := getNamespaceRecord(tx, name)
	if err == nil && !fs.IsSuperuser(c) {
		err = ErrPermission
	}
	if err != nil {
		return nil, err
	}
	root, err := getInode(tx, rec.Root)
	if err != nil {
		return nil, err
	}
	empty := root.Children == 0
	switch {
	case rec.InTrash() && mode != DeleteNow:
		return nil, fserr.Errorf(ErrNoNamespace, "the namespace is in the trash already, to be removed for good at %s",
			Stamp(rec.PurgeAt))
	case !empty && mode == DeleteIfEmpty:
		return nil, fserr.Errorf(ErrNotEmpty, "the namespace is not empty: it holds %s", Describe(root))
	case !empty && mode == DeleteToTrash && fs.cfg.NamespaceTrash > 0:
		// NB: a command's time is never 0 in a log, but Deleted must not
		// be, as it marks the record as in the trash.
		rec.Deleted = max(now, 1)
		rec.PurgeAt = rec.Deleted + fs.cfg.NamespaceTrash
		tx.Set(kvschema.NamespaceKey(rec.Name), kvschema.EncodeNamespace(rec))
		return root, nil
	}
	return root, removeNamespace(tx, rec, root)
}

// removeNamespace removes a namespace for good: its record at once, its
// content by purge commands, its blocks by the garbage collector.
func removeNamespace(tx kv.Txn, rec *kvschema.Namespace, root *kvschema.Inode) error {
	tx.Delete(kvschema.NamespaceKey(rec.Name))
	return drop(tx, root, blockStore(rec))
}

// RestoreNamespace brings namespace name back from the trash, as it was
// when it was deleted; c must be a superuser.
func (fs *FS) RestoreNamespace(tx kv.Txn, c Caller, name string) error {
	rec, err := getNamespaceRecord(tx, name)
	switch {
	case err != nil:
	case !fs.IsSuperuser(c):
		err = ErrPermission
	case !rec.InTrash():
		err = fserr.Errorf(ErrExists, "the namespace exists and is not in the trash")
	}
	if err != nil {
		return pathErr("restoreNamespace", name, err)
	}
	rec.Deleted, rec.PurgeAt = 0, 0
	tx.Set(kvschema.NamespaceKey(rec.Name), kvschema.EncodeNamespace(rec))
	return nil
}

// PurgeNamespace removes namespace name for good if it is in the trash
// since time deleted and its time there is over at now, and reports whether
// it did. A namespace restored (and perhaps deleted again) since is left
// alone.
func PurgeNamespace(tx kv.Txn, now int64, name string, deleted int64) (bool, error) {
	rec, err := getNamespaceRecord(tx, name)
	if errors.Is(err, ErrNoNamespace) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !rec.InTrash() || rec.Deleted != deleted || rec.PurgeAt > now {
		return false, nil
	}
	root, err := getInode(tx, rec.Root)
	if err != nil {
		return false, err
	}
	return true, removeNamespace(tx, rec, root)
}

// ExpiredNamespaces returns the namespaces in the trash whose time there
// is over at now.
func ExpiredNamespaces(r kv.Reader, now int64) ([]*kvschema.Namespace, error) {
	all, err := Namespaces(r)
	var out []*kvschema.Namespace
	for _, ns := range all {
		if ns.InTrash() && ns.PurgeAt <= now {
			out = append(out, ns)
		}
	}
	return out, err
}

// Namespaces returns every namespace, those in the trash too, sorted by
// name.
func Namespaces(r kv.Reader) ([]*kvschema.Namespace, error) {
	start, end := kvschema.NamespaceRange()
	var out []*kvschema.Namespace
	var derr error
	err := r.Scan(start, end, func(_, v []byte) bool {
		var ns *kvschema.Namespace
		ns, derr = kvschema.DecodeNamespace(v)
		out = append(out, ns)
		return derr == nil
	})
	return out, orErr(err, derr)
}

// Stamp formats a time of the namespace (milliseconds since the epoch)
// for messages, in UTC so that every replica words it alike.
func Stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC") }

// Usage returns what namespace ns holds, from its root's aggregates, in the
// trash or not.
func Usage(r kv.Reader, ns *kvschema.Namespace) (Summary, error) {
	root, err := getInode(r, ns.Root)
	if err != nil {
		return Summary{}, pathErr("usage", ns.Name, err)
	}
	return Summary{Length: root.SubLength, Files: root.SubFiles, Dirs: root.SubDirs + 1}, nil
}

// Describe says what directory n holds below it, from its aggregates.
func Describe(n *kvschema.Inode) string {
	return fmt.Sprintf("%s, %s and %s", plural(n.SubFiles, "file"), plural(n.SubDirs, "directory"), plural(n.SubLength, "byte"))
}

func plural(n uint64, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case what == "directory":
		return fmt.Sprintf("%d directories", n)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
