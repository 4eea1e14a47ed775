package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// The quotas an import brings (kvschema's dirquota.go): read for content
// summaries, removed with their directory. Nothing enforces them yet; the
// governance branch's quotas, in the inode's extension record, replace
// these when it is merged.

// DirQuota returns the quotas of directory ino, and whether it has any.
func DirQuota(r kv.Reader, ino uint64) (kvschema.Quota, bool, error) {
	v, ok, err := r.Get(kvschema.QuotaKey(ino))
	if err != nil || !ok {
		return kvschema.Quota{}, false, err
	}
	q, err := kvschema.DecodeQuota(v)
	return q, err == nil, err
}

// dropDirQuota removes directory ino's quotas, if it has any.
func dropDirQuota(tx kv.Txn, ino uint64) {
	if _, ok, _ := tx.Get(kvschema.QuotaKey(ino)); ok {
		tx.Delete(kvschema.QuotaKey(ino))
	}
}
