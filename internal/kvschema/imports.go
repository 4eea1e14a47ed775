package kvschema

import (
	"encoding/binary"
)

// prefixImport is the prefix of the record of a namespace import.
const prefixImport = 0x12

// MaxImportID bounds the length of an import's id.
const MaxImportID = 64

// ImportKey holds the record of the import called id.
func ImportKey(id string) []byte { return append([]byte{prefixImport}, id...) }

// ImportRange is the range [start, end) of the import records.
func ImportRange() (start, end []byte) { return []byte{prefixImport}, []byte{prefixImport + 1} }

// ImportName decodes an import record's key.
func ImportName(key []byte) string { return string(key[1:]) }

// Import is what the state keeps of a namespace import: the ids it
// reserved and, once its tables are in, that it is done. An import that
// is not done has nothing in the state but this record and its ids.
type Import struct {
	Namespace string
	Base      uint64 // the first id reserved
	Count     uint64 // how many
	Started   int64  // when it was begun, ms since the epoch
	Done      int64  // when its tables went in; 0 while they are not
}

// EncodeImport encodes an import record.
func EncodeImport(im Import) []byte {
	b := appendString([]byte{recordVersion}, im.Namespace)
	b = binary.AppendUvarint(b, im.Base)
	b = binary.AppendUvarint(b, im.Count)
	b = binary.AppendVarint(b, im.Started)
	return binary.AppendVarint(b, im.Done)
}

// DecodeImport decodes an import record.
func DecodeImport(b []byte) (Import, error) {
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return Import{}, ErrCorrupt
	}
	im := Import{Namespace: d.string(), Base: d.uvarint(), Count: d.uvarint(), Started: d.varint(), Done: d.varint()}
	return im, d.finish()
}

// IsDentryKey and IsInodeKey tell the kind of a key (of its
// right length).
func IsDentryKey(k []byte) bool { return len(k) > 9 && k[0] == prefixDentry }

// IsInodeKey: see IsDentryKey.
func IsInodeKey(k []byte) bool { return len(k) == 9 && k[0] == prefixInode }
