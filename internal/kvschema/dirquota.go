package kvschema

import "encoding/binary"

// A directory's quotas, as an HDFS image brings them (strata admin import),
// in a record of their own (prefixQuota, 0x13) beside the inode. Everything
// of the import's quotas in the state is here, in internal/namespace's
// dirquota.go and in internal/bulkload's emitQuotas: the governance branch
// keeps quotas in the inode's extension record (version 2) instead, and
// these go when it is merged.

// QuotaKey holds the quotas of directory ino, when it has any.
func QuotaKey(ino uint64) []byte { return idKey(prefixQuota, ino) }

// NoQuota is a quota that is not set.
const NoQuota = -1

// Quota is a directory's limits, as HDFS sets them: on the entries below it
// (Names, the directory itself counted) and on the bytes below it times
// their replication (Space). NoQuota for either that is not set.
type Quota struct {
	Names, Space int64
}

// EncodeQuota encodes a quota record.
func EncodeQuota(q Quota) []byte {
	b := binary.AppendVarint([]byte{recordVersion}, q.Names)
	return binary.AppendVarint(b, q.Space)
}

// DecodeQuota decodes a quota record.
func DecodeQuota(b []byte) (Quota, error) {
	d := decoder{b: b}
	if d.byte() != recordVersion {
		return Quota{}, ErrCorrupt
	}
	q := Quota{Names: d.varint(), Space: d.varint()}
	if q.Names < NoQuota || q.Space < NoQuota {
		return Quota{}, ErrCorrupt
	}
	return q, d.finish()
}

// IsQuotaKey: see IsDentryKey.
func IsQuotaKey(k []byte) bool { return len(k) == 9 && k[0] == prefixQuota }
