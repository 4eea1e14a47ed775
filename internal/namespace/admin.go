package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// ValidNamespaceName reports whether name may name a namespace: 1 to 63
// lower-case letters, digits, '-' and '_', starting with a letter or digit,
// so that it can stand as the authority of a strata:// URI.
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
// the caller, who must be a superuser.
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
	if !ValidNamespaceName(info.Name) || info.Mode != kvschema.ModeBlock && info.Mode != kvschema.ModeCache ||
		info.SyncInterval < -1 || !info.IsCache() && info.SyncInterval != 0 {
		return ErrInvalidArgument
	}
	if _, err := getNamespace(tx, info.Name); err == nil {
		return ErrExists
	} else if err != ErrNoNamespace {
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
	tx.Set(kvschema.NamespaceKey(info.Name), kvschema.EncodeNamespace(&info))
	return nil
}

// DeleteNamespace removes a namespace; its content is purged later.
func (fs *FS) DeleteNamespace(tx kv.Txn, c Caller, name string) error {
	rec, err := getNamespace(tx, name)
	if err == nil && !fs.IsSuperuser(c) {
		err = ErrPermission
	}
	if err != nil {
		return pathErr("deleteNamespace", name, err)
	}
	tx.Delete(kvschema.NamespaceKey(rec.Name))
	root, err := getInode(tx, rec.Root)
	if err != nil {
		return err
	}
	return drop(tx, root, blockStore(rec))
}

// Namespaces returns every namespace, sorted by name.
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
