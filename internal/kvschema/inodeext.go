package kvschema

import "encoding/binary"

// inodeExtVersion is the version of an inode record that carries
// extensions: the version 1 fields, then a uvarint of flags saying which
// extensions follow, in this order:
//
//	extPolicy  byte: the storage policy set on the inode
//	extQuota   varint names, varint space: the directory's quotas
//	extACL     uvarint count, then per entry: byte scope<<4|type, byte
//	           permission (rwx), string name
//	extXAttrs  nothing: the inode has XAttrKey records
//
// An inode with no extension is written as version 1, byte for byte as
// before extensions existed.
const inodeExtVersion = 2

const (
	extPolicy = 1 << iota
	extQuota
	extACL
	extXAttrs
	extAll = extPolicy | extQuota | extACL | extXAttrs
)

// InodeExt holds what few inodes have: HDFS's storage policy, quota, ACL
// and extended-attribute features.
type InodeExt struct {
	// Policy is the storage policy set on the inode (internal/storagepolicy's
	// ids); 0 leaves it to the inode's directory.
	Policy uint8
	// Quota is a directory's quotas; nil: none.
	Quota *Quota
	// ACL holds, as HDFS's AclFeature does, the entries of an extended ACL
	// that the mode bits do not: the named users, the owning group and the
	// named groups of the access ACL (whose mask is then the mode's group
	// bits), and every default entry. Sorted as ACLEntry.Less orders them;
	// nil: the mode bits are the whole ACL.
	ACL []ACLEntry
	// XAttrs says the inode has extended attributes (XAttrKey records),
	// so that removing it knows to remove them.
	XAttrs bool
}

func (x *InodeExt) empty() bool {
	return x.Policy == 0 && x.Quota == nil && len(x.ACL) == 0 && !x.XAttrs
}

func (x *InodeExt) append(b []byte) []byte {
	var flags uint64
	if x.Policy != 0 {
		flags |= extPolicy
	}
	if x.Quota != nil {
		flags |= extQuota
	}
	if len(x.ACL) > 0 {
		flags |= extACL
	}
	if x.XAttrs {
		flags |= extXAttrs
	}
	b = binary.AppendUvarint(b, flags)
	if x.Policy != 0 {
		b = append(b, x.Policy)
	}
	if x.Quota != nil {
		b = binary.AppendVarint(b, x.Quota.Names)
		b = binary.AppendVarint(b, x.Quota.Space)
	}
	if len(x.ACL) > 0 {
		b = binary.AppendUvarint(b, uint64(len(x.ACL)))
		for _, e := range x.ACL {
			b = append(b, e.key(), e.Perm)
			b = appendString(b, e.Name)
		}
	}
	return b
}

// decodeInodeExt reads the extensions of a version 2 record. Only the
// canonical form decodes: some extension, each well formed.
func decodeInodeExt(d *decoder) InodeExt {
	var x InodeExt
	flags := d.uvarint()
	if flags == 0 || flags&^extAll != 0 {
		d.bad = true
		return x
	}
	if flags&extPolicy != 0 {
		if x.Policy = d.byte(); x.Policy == 0 {
			d.bad = true
		}
	}
	if flags&extQuota != 0 {
		q := Quota{Names: d.varint(), Space: d.varint()}
		if q.Names < NoQuota || q.Space < NoQuota || !q.Set() {
			d.bad = true
		}
		x.Quota = &q
	}
	if flags&extACL != 0 {
		x.ACL = decodeACL(d)
	}
	x.XAttrs = flags&extXAttrs != 0
	return x
}

func decodeACL(d *decoder) []ACLEntry {
	n := d.uvarintMax(MaxACLEntries * 2)
	if n == 0 {
		d.bad = true
		return nil
	}
	acl := make([]ACLEntry, 0, n)
	for range n {
		k := d.byte()
		e := ACLEntry{Default: k>>4 == 1, Type: ACLType(k & 0x0f), Perm: d.byte()}
		e.Name = d.string()
		if k>>4 > 1 || e.Type < ACLUser || e.Type > ACLOther || e.Perm > 7 {
			d.bad = true
		}
		acl = append(acl, e)
	}
	return acl
}

// NoQuota is a quota that is not set (HDFS's QUOTA_RESET).
const NoQuota = -1

// Quota is a directory's limits, as HDFS's: on names (the directory
// itself and every file and directory below it) and on space (the bytes
// of the files below it). NoQuota leaves one unlimited; 0 allows nothing.
type Quota struct {
	Names, Space int64
}

// Set reports whether q limits anything.
func (q Quota) Set() bool { return q.Names != NoQuota || q.Space != NoQuota }

// ACLType is the type of an ACL entry, in HDFS's order.
type ACLType uint8

// ACL entry types.
const (
	ACLUser ACLType = iota + 1
	ACLGroup
	ACLMask
	ACLOther
)

// MaxACLEntries is HDFS's bound on the entries of an ACL, per scope.
const MaxACLEntries = 32

// ACLEntry is one entry of a POSIX ACL, as HDFS's AclEntry.
type ACLEntry struct {
	// Default marks an entry of a directory's default ACL, which new
	// children inherit, rather than of its access ACL.
	Default bool
	Type    ACLType
	// Name is the named user or group; empty for the owner, the owning
	// group, the mask and other.
	Name string
	Perm uint8 // rwx bits
}

func (e ACLEntry) key() byte {
	k := byte(e.Type)
	if e.Default {
		k |= 1 << 4
	}
	return k
}

// Compare orders entries as HDFS's ACL_ENTRY_COMPARATOR does: access
// before default, then user, group, mask, other, then by name (the
// unnamed first). It ignores the permission.
func (e ACLEntry) Compare(o ACLEntry) int {
	switch {
	case e.key() != o.key():
		if e.Default != o.Default {
			if e.Default {
				return 1
			}
			return -1
		}
		return int(e.Type) - int(o.Type)
	case e.Name < o.Name:
		return -1
	case e.Name > o.Name:
		return 1
	}
	return 0
}

// XAttrKey holds the value of extended attribute name (with its namespace
// prefix, "user.x") of inode ino; the value is the raw bytes.
func XAttrKey(ino uint64, name string) []byte {
	return append(idKey(prefixXAttr, ino), name...)
}

// XAttrRange is the key range [start, end) of inode ino's extended
// attributes, in name order.
func XAttrRange(ino uint64) (start, end []byte) {
	return idKey(prefixXAttr, ino), idKey(prefixXAttr, ino+1)
}

// XAttrName decodes the attribute name of an XAttrKey.
func XAttrName(key []byte) (string, error) {
	if len(key) < 10 || key[0] != prefixXAttr {
		return "", ErrCorrupt
	}
	return string(key[9:]), nil
}
