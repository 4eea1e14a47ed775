package kvschema

import (
	"encoding/binary"
	"errors"
)

// Key prefixes; see the key table in the package doc.
const (
	prefixSystem    = 0x00
	prefixNamespace = 0x01
	prefixDentry    = 0x02
	prefixInode     = 0x03
	prefixInline    = 0x04
	prefixBlock     = 0x05
	prefixPurge     = 0x06
	prefixGarbage   = 0x07
	prefixLease     = 0x08
	prefixObject    = 0x0C
	prefixTail      = 0x0D
	prefixXAttr     = 0x0E
)

// ErrCorrupt reports a key or record that does not decode.
var ErrCorrupt = errors.New("kvschema: corrupt encoding")

// AppliedKey holds the index and term of the last applied log entry.
var AppliedKey = []byte{prefixSystem, 'a', 'p', 'p', 'l', 'i', 'e', 'd'}

// NextIDKey holds the next inode id to allocate.
var NextIDKey = []byte{prefixSystem, 'n', 'e', 'x', 't', 'i', 'd'}

// SecretKey holds the cluster secret called name.
func SecretKey(name string) []byte {
	return append([]byte{prefixSystem, 's', 'e', 'c', 'r', 'e', 't', '/'}, name...)
}

// SecretRange is the range [start, end) of the keys of the secrets whose
// names begin with prefix (not empty).
func SecretRange(prefix string) (start, end []byte) {
	start = SecretKey(prefix)
	end = append([]byte(nil), start...)
	end[len(end)-1]++
	return start, end
}

// NamespaceKey is the key of a namespace record.
func NamespaceKey(name string) []byte {
	return append([]byte{prefixNamespace}, name...)
}

// NamespaceRange is the key range [start, end) of all namespace records.
func NamespaceRange() (start, end []byte) {
	return []byte{prefixNamespace}, []byte{prefixNamespace + 1}
}

// NamespaceName decodes a namespace record key.
func NamespaceName(key []byte) string { return string(key[1:]) }

// DentryKey is the key of the entry name in directory parent.
func DentryKey(parent uint64, name string) []byte {
	k := make([]byte, 9, 9+len(name))
	k[0] = prefixDentry
	binary.BigEndian.PutUint64(k[1:], parent)
	return append(k, name...)
}

// AppendDentryKey appends the key of the entry name in directory parent
// to dst.
func AppendDentryKey(dst []byte, parent uint64, name []byte) []byte {
	dst = binary.BigEndian.AppendUint64(append(dst, prefixDentry), parent)
	return append(dst, name...)
}

// DentryRange is the key range [start, end) of a directory's entries.
func DentryRange(parent uint64) (start, end []byte) {
	start = DentryKey(parent, "")
	end = DentryKey(parent+1, "")
	return start, end
}

// DentryName decodes the entry name of a dentry key.
func DentryName(key []byte) (string, error) {
	if len(key) < 9 || key[0] != prefixDentry {
		return "", ErrCorrupt
	}
	return string(key[9:]), nil
}

// InodeKey is the key of an inode record.
func InodeKey(ino uint64) []byte { return idKey(prefixInode, ino) }

// InlineKey is the key of a small file's inline content.
func InlineKey(ino uint64) []byte { return idKey(prefixInline, ino) }

// BlockKey is the key of block number index of file ino.
func BlockKey(ino uint64, index uint32) []byte {
	k := idKey(prefixBlock, ino)
	return binary.BigEndian.AppendUint32(k, index)
}

// TailKey holds the bytes a writer flushed at offset of file ino that no
// block holds yet.
func TailKey(ino, offset uint64) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixTail, ino), offset)
}

// TailRange is the key range [start, end) of a file's flushed tail.
func TailRange(ino uint64) (start, end []byte) {
	return idKey(prefixTail, ino), idKey(prefixTail, ino+1)
}

// TailOffset decodes the offset of a tail key.
func TailOffset(key []byte) (uint64, error) {
	if len(key) != 17 || key[0] != prefixTail {
		return 0, ErrCorrupt
	}
	return binary.BigEndian.Uint64(key[9:]), nil
}

// BlockRange is the key range [start, end) of a file's blocks.
func BlockRange(ino uint64) (start, end []byte) {
	return idKey(prefixBlock, ino), idKey(prefixBlock, ino+1)
}

// PurgeKey marks the detached subtree rooted at ino for purging.
func PurgeKey(ino uint64) []byte { return idKey(prefixPurge, ino) }

// PurgeRange is the key range [start, end) of the purge queue.
func PurgeRange() (start, end []byte) {
	return []byte{prefixPurge}, []byte{prefixPurge + 1}
}

// GarbageKey queues block of file inode for deletion from the bucket; block
// 0 queues a scan for the file's orphaned objects.
func GarbageKey(inode, block uint64) []byte {
	return binary.BigEndian.AppendUint64(idKey(prefixGarbage, inode), block)
}

// DecodeGarbageKey returns the inode and block of a garbage key.
func DecodeGarbageKey(key []byte) (inode, block uint64, err error) {
	if len(key) != 17 || key[0] != prefixGarbage {
		return 0, 0, ErrCorrupt
	}
	return binary.BigEndian.Uint64(key[1:9]), binary.BigEndian.Uint64(key[9:]), nil
}

// GarbageRange is the key range [start, end) of the block garbage queue.
func GarbageRange() (start, end []byte) {
	return []byte{prefixGarbage}, []byte{prefixGarbage + 1}
}

// KeyID decodes the id of an inode, inline, purge or garbage key.
func KeyID(key []byte) (uint64, error) {
	if len(key) < 9 {
		return 0, ErrCorrupt
	}
	return binary.BigEndian.Uint64(key[1:9]), nil
}

// SetKeyID sets the id of an inode, inline, purge or garbage key in place
// and returns the key: one key buffer serves a loop of lookups.
func SetKeyID(key []byte, id uint64) []byte {
	binary.BigEndian.PutUint64(key[1:9], id)
	return key
}

func idKey(prefix byte, id uint64) []byte {
	k := make([]byte, 9, 13)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

// EncodeUint64s encodes fixed-width big-endian integers (the applied and
// next-id values).
func EncodeUint64s(vs ...uint64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// DecodeUint64s decodes n fixed-width big-endian integers.
func DecodeUint64s(b []byte, n int) ([]uint64, error) {
	if len(b) != 8*n {
		return nil, ErrCorrupt
	}
	vs := make([]uint64, n)
	for i := range vs {
		vs[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return vs, nil
}

// ObjectStateKey holds what a cache-mode namespace knows of the bucket
// behind inode ino (EncodeObjectState).
func ObjectStateKey(ino uint64) []byte { return idKey(prefixObject, ino) }

// LeaseKey records that holder writes file ino. Holders contain no NUL byte.
func LeaseKey(holder string, ino uint64) []byte {
	k := append(append([]byte{prefixLease}, holder...), 0)
	return binary.BigEndian.AppendUint64(k, ino)
}

// LeaseRange is the key range [start, end) of holder's leases, or of all
// leases when holder is empty.
func LeaseRange(holder string) (start, end []byte) {
	if holder == "" {
		return []byte{prefixLease}, []byte{prefixLease + 1}
	}
	start = append(append([]byte{prefixLease}, holder...), 0)
	end = append(append([]byte{prefixLease}, holder...), 1)
	return start, end
}

// DecodeLeaseKey returns the holder and inode of a lease key.
func DecodeLeaseKey(key []byte) (holder string, ino uint64, err error) {
	if len(key) < 10 || key[0] != prefixLease || key[len(key)-9] != 0 {
		return "", 0, ErrCorrupt
	}
	return string(key[1 : len(key)-9]), binary.BigEndian.Uint64(key[len(key)-8:]), nil
}
