package namespace

import (
	"errors"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Imports: a namespace's whole tree built elsewhere (internal/bulkload)
// and added at once. BeginImport reserves its inode ids; the tree's
// records are then ingested by the service together with what
// CommitImport writes, which makes the tree a namespace's: before it,
// nothing of the import is visible.

// MaxImportInodes bounds what one import may reserve.
const MaxImportInodes = 1 << 40

// ValidImportID reports whether id may name an import: 1 to
// kvschema.MaxImportID of [0-9a-z-].
func ValidImportID(id string) bool {
	if len(id) == 0 || len(id) > kvschema.MaxImportID {
		return false
	}
	for _, ch := range id {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// BeginImport reserves count inode ids for the import called id into
// namespace ns, for c, who must be a superuser, and records it. An import
// begun before is answered with its record as it is: its reservation, and
// whether it is done.
func (fs *FS) BeginImport(tx kv.Txn, now int64, c Caller, id, ns string, count uint64) (kvschema.Import, error) {
	im, err := fs.beginImport(tx, now, c, id, ns, count)
	if err != nil {
		return kvschema.Import{}, pathErr("beginImport", ns, err)
	}
	return im, nil
}

func (fs *FS) beginImport(tx kv.Txn, now int64, c Caller, id, ns string, count uint64) (kvschema.Import, error) {
	switch {
	case !fs.IsSuperuser(c):
		return kvschema.Import{}, ErrPermission
	case !ValidImportID(id):
		return kvschema.Import{}, fserr.Errorf(ErrInvalidArgument, "import id %q: want 1 to %d of [0-9a-z-]", id, kvschema.MaxImportID)
	case !ValidNamespaceName(ns):
		return kvschema.Import{}, fserr.Errorf(ErrInvalidArgument, "not a valid namespace name: a name is %s", NamespaceNameRule)
	case count == 0 || count > MaxImportInodes:
		return kvschema.Import{}, fserr.Errorf(ErrInvalidArgument, "an import of %d inodes: want 1 to %d", count, uint64(MaxImportInodes))
	}
	im, found, err := importRecord(tx, id)
	if err != nil || found {
		if err == nil && (im.Namespace != ns || im.Count != count) {
			err = fserr.Errorf(ErrExists, "import %s is into %s, of %d inodes", id, im.Namespace, im.Count)
		}
		return im, err
	}
	if err := importTarget(tx, ns); err != nil {
		return kvschema.Import{}, err
	}
	base, err := nextID(tx)
	if err != nil {
		return kvschema.Import{}, err
	}
	tx.Set(kvschema.NextIDKey, kvschema.EncodeUint64s(base+count))
	im = kvschema.Import{Namespace: ns, Base: base, Count: count, Started: now}
	tx.Set(kvschema.ImportKey(id), kvschema.EncodeImport(im))
	return im, nil
}

// importTarget checks that a tree may become namespace ns's: ns does not
// exist, or it is live and empty.
func importTarget(r kv.Reader, ns string) error {
	rec, err := getNamespaceRecord(r, ns)
	switch {
	case errors.Is(err, ErrNoNamespace):
		return nil
	case err != nil:
		return err
	case rec.InTrash():
		return fserr.Errorf(ErrExists, "a deleted namespace of that name is in the trash until %s", Stamp(rec.PurgeAt))
	}
	root, err := getInode(r, rec.Root)
	if err != nil {
		return err
	}
	if root.Children != 0 {
		return fserr.Errorf(ErrNotEmpty, "an import goes into an empty namespace, and this one holds %s", Describe(root))
	}
	return nil
}

func importRecord(r kv.Reader, id string) (kvschema.Import, bool, error) {
	v, ok, err := r.Get(kvschema.ImportKey(id))
	if err != nil || !ok {
		return kvschema.Import{}, false, err
	}
	im, err := kvschema.DecodeImport(v)
	return im, true, err
}

// CommitImport makes the tree of the import called id, whose records the
// caller ingests with tx's writes, namespace info.Name's, rooted at root;
// c must be a superuser. A namespace of that name that exists must still
// be empty; its root gives way to the tree's, and it keeps its mode and
// bucket. One that does not is created with info's.
func (fs *FS) CommitImport(tx kv.Txn, now int64, c Caller, id string, info kvschema.Namespace, root uint64) error {
	if err := fs.commitImport(tx, now, c, id, info, root); err != nil {
		return pathErr("commitImport", info.Name, err)
	}
	return nil
}

func (fs *FS) commitImport(tx kv.Txn, now int64, c Caller, id string, info kvschema.Namespace, root uint64) error {
	if !fs.IsSuperuser(c) {
		return ErrPermission
	}
	im, found, err := importRecord(tx, id)
	switch {
	case err != nil:
		return err
	case !found:
		return fserr.Errorf(ErrNotFound, "no import %s: begin it first", id)
	case im.Done != 0:
		return fserr.Errorf(ErrExists, "import %s committed at %s", id, Stamp(im.Done))
	case im.Namespace != info.Name:
		return fserr.Errorf(ErrInvalidArgument, "import %s is into %s", id, im.Namespace)
	case root < im.Base || root-im.Base >= im.Count:
		return fserr.Errorf(ErrInvalidArgument, "the root %d is not among the import's ids, %d to %d", root, im.Base, im.Base+im.Count-1)
	}
	if err := importTarget(tx, info.Name); err != nil {
		return err
	}
	rec, err := getNamespaceRecord(tx, info.Name)
	switch {
	case err == nil:
		old, err := getInode(tx, rec.Root)
		if err != nil {
			return err
		}
		dropDir(tx, old, blockStore(rec))
		rec.Root = root
	case errors.Is(err, ErrNoNamespace):
		if err := checkNewNamespace(info); err != nil {
			return err
		}
		rec = &info
		rec.Root, rec.Created, rec.Deleted, rec.PurgeAt = root, now, 0, 0
	default:
		return err
	}
	tx.Set(kvschema.NamespaceKey(rec.Name), kvschema.EncodeNamespace(rec))
	im.Done = now
	tx.Set(kvschema.ImportKey(id), kvschema.EncodeImport(im))
	return nil
}

// AbortImport forgets the import called id, which must not have
// committed; c must be a superuser. Its ids stay unused.
func (fs *FS) AbortImport(tx kv.Txn, c Caller, id string) error {
	im, found, err := importRecord(tx, id)
	switch {
	case err != nil:
	case !fs.IsSuperuser(c):
		err = ErrPermission
	case !found:
		err = fserr.Errorf(ErrNotFound, "no import %s", id)
	case im.Done != 0:
		err = fserr.Errorf(ErrExists, "import %s committed at %s: delete the namespace instead", id, Stamp(im.Done))
	}
	if err != nil {
		return pathErr("abortImport", id, err)
	}
	tx.Delete(kvschema.ImportKey(id))
	return nil
}

// ImportRecord returns the record of the import called id, and whether
// there is one.
func ImportRecord(r kv.Reader, id string) (kvschema.Import, bool, error) { return importRecord(r, id) }
