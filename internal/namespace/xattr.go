package namespace

import (
	"errors"
	"slices"
	"strings"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// Extended attributes, as HDFS's: a name in a namespace (user., trusted.,
// security., system., raw.) and a value of bytes, kept beside the inode
// (kvschema.XAttrKey) with a flag on it. The rules are HDFS's
// (FSDirXAttrOp, XAttrPermissionFilter): user. attributes follow the
// file's permissions, trusted. ones are a superuser's, of security. only
// HDFS's unreadable-by-superuser marker may be set, and system. and raw.
// are no caller's. A cache-mode namespace's files are its bucket's
// objects: they have none.

// Limits, HDFS's defaults (dfs.namenode.fs-limits.max-xattrs-per-inode and
// max-xattr-size).
const (
	MaxXAttrs    = 32
	MaxXAttrSize = 16384
)

// UnreadableBySuperuser is the security. attribute that makes a file
// unreadable by the superuser; it takes no value and is never removed.
const UnreadableBySuperuser = "security.hdfs.unreadable.by.superuser"

// XAttrFlag says whether a set may create an attribute, replace one, or
// either (HDFS's XAttrSetFlag).
type XAttrFlag uint8

// The flags.
const (
	XAttrCreate  XAttrFlag = 1
	XAttrReplace XAttrFlag = 2
)

// XAttr is one extended attribute.
type XAttr struct {
	Name  string // with its namespace, lower case: "user.checksum"
	Value []byte
}

var xattrNamespaces = []string{"user", "trusted", "security", "system", "raw"}

// NormalizeXAttrName checks name as HDFS's XAttrHelper does and returns it
// with its namespace in lower case ("USER.x" is "user.x").
func NormalizeXAttrName(name string) (string, error) {
	i := strings.IndexByte(name, '.')
	if i < 3 || !slices.Contains(xattrNamespaces, strings.ToLower(name[:i])) {
		return "", fserr.Errorf(ErrInvalidArgument, "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'")
	}
	if i == len(name)-1 {
		return "", fserr.Errorf(ErrInvalidArgument, "XAttr name cannot be empty.")
	}
	return strings.ToLower(name[:i]) + name[i:], nil
}

// xattrNS is a normalized name's namespace.
func xattrNS(name string) string { return name[:strings.IndexByte(name, '.')] }

// mayUse is HDFS's checkPermissionForApi: whether c may name attribute
// name at all (setting it to value, if set is true).
func (fs *FS) mayUse(c Caller, name string, set bool, value []byte) error {
	switch ns := xattrNS(name); {
	case ns == "user", ns == "trusted" && fs.IsSuperuser(c):
		return nil
	case name == UnreadableBySuperuser:
		if set && len(value) > 0 {
			return fserr.Errorf(ErrPermission, "Attempt to set a value for '%s'. Values are not allowed for this xattr.", UnreadableBySuperuser)
		}
		return nil
	}
	return fserr.Errorf(ErrPermission, "User doesn't have permission for xattr: %s", name)
}

// visible is HDFS's filterXAttrsForApi: what c sees of a file's attributes.
func (fs *FS) visible(c Caller, name string) bool {
	ns := xattrNS(name)
	return ns == "user" || ns == "trusted" && fs.IsSuperuser(c) || name == UnreadableBySuperuser
}

// SetXAttr sets extended attribute name of path to value.
func (fs *FS) SetXAttr(tx kv.Txn, c Caller, ns, path, name string, value []byte, flags XAttrFlag) error {
	if err := fs.setXAttr(tx, c, ns, path, name, value, flags); err != nil {
		return pathErr("setXAttr", path, err)
	}
	return nil
}

func (fs *FS) setXAttr(tx kv.Txn, c Caller, ns, path, name string, value []byte, flags XAttrFlag) error {
	name, err := NormalizeXAttrName(name)
	if err != nil {
		return err
	}
	if size := len(name) - len(xattrNS(name)) - 1 + len(value); size > MaxXAttrSize {
		return fserr.Errorf(ErrInvalidArgument,
			"The XAttr is too big. The maximum combined size of the name and value is %d, but the total size is %d", MaxXAttrSize, size)
	}
	if err := fs.mayUse(c, name, true, value); err != nil {
		return err
	}
	n, err := fs.xattrTarget(tx, c, ns, path, name)
	if err != nil {
		return err
	}
	if name == UnreadableBySuperuser && n.IsDir() {
		return fserr.Errorf(ErrInvalidArgument, "Can only set '%s' on a file.", UnreadableBySuperuser)
	}
	names, err := xattrNames(tx, n)
	if err != nil {
		return err
	}
	short := name[len(xattrNS(name))+1:]
	switch exists := slices.Contains(names, name); {
	case exists && flags&XAttrReplace == 0:
		return fserr.Errorf(ErrExists, "XAttr: %s already exists. The REPLACE flag must be specified.", short)
	case !exists && flags&XAttrCreate == 0:
		return fserr.Errorf(fserr.ErrNoXAttr, "XAttr: %s does not exist. The CREATE flag must be specified.", short)
	case !exists && userVisible(name) && countVisible(names)+1 > MaxXAttrs:
		return fserr.Errorf(ErrInvalidArgument, "Cannot add additional XAttr to inode, would exceed limit of %d", MaxXAttrs)
	}
	tx.Set(kvschema.XAttrKey(n.ID, name), append([]byte{}, value...))
	if !n.XAttrs {
		n.XAttrs = true
		putInode(tx, n)
	}
	return nil
}

// userVisible is what HDFS counts against the attributes' limit.
func userVisible(name string) bool { ns := xattrNS(name); return ns == "user" || ns == "trusted" }

func countVisible(names []string) int {
	n := 0
	for _, name := range names {
		if userVisible(name) {
			n++
		}
	}
	return n
}

// xattrTarget resolves the file whose attribute name a caller changes and
// checks it may (HDFS's checkXAttrChangeAccess): a user. attribute needs
// write permission, or on a sticky directory its ownership.
func (fs *FS) xattrTarget(r kv.Reader, c Caller, ns, path, name string) (*kvschema.Inode, error) {
	n, err := fs.resolveXAttrs(r, c, ns, path)
	if err != nil {
		return nil, err
	}
	if xattrNS(name) == "user" && !fs.IsSuperuser(c) {
		if n.IsDir() && n.Perm&stickyBit != 0 {
			if n.Owner != c.User {
				return nil, notOwner(c, path)
			}
		} else if !fs.check(c, n, accessWrite) {
			return nil, ErrPermission
		}
	}
	return n, nil
}

// resolveXAttrs looks up the file whose attributes a call reads or
// changes; a cache-mode namespace has none to read or change.
func (fs *FS) resolveXAttrs(r kv.Reader, c Caller, ns, path string) (*kvschema.Inode, error) {
	if rec, err := getNamespace(r, ns); err != nil || rec.IsCache() {
		return nil, orErr(err, errCacheXAttrs)
	}
	res, err := fs.resolveExisting(r, c, ns, path)
	if err != nil {
		return nil, err
	}
	return res.node, nil
}

var errCacheXAttrs = fserr.Errorf(ErrUnsupported,
	"extended attributes need a block-mode namespace: a cache-mode namespace's files are its bucket's objects, and Strata writes no object metadata")

// RemoveXAttr removes extended attribute name of path.
func (fs *FS) RemoveXAttr(tx kv.Txn, c Caller, ns, path, name string) error {
	if err := fs.removeXAttr(tx, c, ns, path, name); err != nil {
		return pathErr("removeXAttr", path, err)
	}
	return nil
}

func (fs *FS) removeXAttr(tx kv.Txn, c Caller, ns, path, name string) error {
	name, err := NormalizeXAttrName(name)
	if err != nil {
		return err
	}
	if err := fs.mayUse(c, name, false, nil); err != nil {
		return err
	}
	n, err := fs.xattrTarget(tx, c, ns, path, name)
	if err != nil {
		return err
	}
	if name == UnreadableBySuperuser {
		return fserr.Errorf(ErrPermission, "The xattr '%s' can not be deleted.", UnreadableBySuperuser)
	}
	names, err := xattrNames(tx, n)
	if err != nil {
		return err
	}
	if !slices.Contains(names, name) {
		return fserr.Errorf(fserr.ErrNoXAttr, "No matching attributes found for remove operation")
	}
	tx.Delete(kvschema.XAttrKey(n.ID, name))
	if len(names) == 1 {
		n.XAttrs = false
		putInode(tx, n)
	}
	return nil
}

// GetXAttrs returns path's extended attributes named in names, each with
// its value, or, with no names, every one the caller may see; the caller
// needs read permission. A name it has not fails the whole call.
func (fs *FS) GetXAttrs(r kv.Reader, c Caller, ns, path string, names []string) ([]XAttr, error) {
	out, err := fs.getXAttrs(r, c, ns, path, names, true)
	if err != nil {
		return nil, pathErr("getXAttrs", path, err)
	}
	return out, nil
}

// ListXAttrs returns the names of path's extended attributes the caller
// may see.
func (fs *FS) ListXAttrs(r kv.Reader, c Caller, ns, path string) ([]string, error) {
	all, err := fs.getXAttrs(r, c, ns, path, nil, false)
	if err != nil {
		return nil, pathErr("listXAttrs", path, err)
	}
	out := make([]string, len(all))
	for i, x := range all {
		out[i] = x.Name
	}
	return out, nil
}

func (fs *FS) getXAttrs(r kv.Reader, c Caller, ns, path string, names []string, values bool) ([]XAttr, error) {
	want := make([]string, len(names))
	for i, name := range names {
		var err error
		if want[i], err = NormalizeXAttrName(name); err != nil {
			return nil, err
		}
		if err := fs.mayUse(c, want[i], false, nil); err != nil {
			return nil, err
		}
	}
	n, err := fs.resolveXAttrs(r, c, ns, path)
	switch {
	case err != nil:
		return nil, err
	case !fs.check(c, n, accessRead):
		return nil, ErrPermission
	}
	all, err := readXAttrs(r, n, values, func(name string) bool { return fs.visible(c, name) })
	if err != nil || len(want) == 0 {
		return all, err
	}
	out := make([]XAttr, 0, len(want))
	for _, name := range want {
		i := slices.IndexFunc(all, func(x XAttr) bool { return x.Name == name })
		if i < 0 {
			return nil, fserr.Errorf(fserr.ErrNoXAttr, "At least one of the attributes provided was not found.")
		}
		out = append(out, all[i])
	}
	return out, nil
}

// readXAttrs returns n's attributes that keep says to, in name order, with
// their values if values is set.
func readXAttrs(r kv.Reader, n *kvschema.Inode, values bool, keep func(string) bool) ([]XAttr, error) {
	if !n.XAttrs {
		return nil, nil
	}
	var out []XAttr
	var derr error
	start, end := kvschema.XAttrRange(n.ID)
	err := r.Scan(start, end, func(k, v []byte) bool {
		var name string
		if name, derr = kvschema.XAttrName(k); derr != nil {
			return false
		}
		if keep(name) {
			x := XAttr{Name: name}
			if values {
				x.Value = append([]byte{}, v...)
			}
			out = append(out, x)
		}
		return true
	})
	return out, errors.Join(err, derr)
}

// xattrNames returns the names of all n's attributes.
func xattrNames(r kv.Reader, n *kvschema.Inode) ([]string, error) {
	all, err := readXAttrs(r, n, false, func(string) bool { return true })
	names := make([]string, len(all))
	for i, x := range all {
		names[i] = x.Name
	}
	return names, err
}

// dropXAttrs removes n's attributes, as n is removed.
func dropXAttrs(tx kv.Txn, n *kvschema.Inode) error {
	names, err := xattrNames(tx, n)
	for _, name := range names {
		tx.Delete(kvschema.XAttrKey(n.ID, name))
	}
	return err
}

// unreadableBySuperuser reports whether file n bears the attribute that
// keeps the superuser from reading it.
func unreadableBySuperuser(r kv.Reader, n *kvschema.Inode) (bool, error) {
	if !n.XAttrs {
		return false, nil
	}
	_, ok, err := r.Get(kvschema.XAttrKey(n.ID, UnreadableBySuperuser))
	return ok, err
}
