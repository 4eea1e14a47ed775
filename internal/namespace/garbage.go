package namespace

import (
	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
)

// GarbageItem is an entry of the block garbage queue.
type GarbageItem struct {
	Key          []byte
	Inode, Block uint64 // Block 0: scan the file's objects for orphans
	kvschema.Garbage
}

// GarbageBatch returns up to limit entries of the block garbage queue.
func GarbageBatch(r kv.Reader, limit int) ([]GarbageItem, error) {
	start, end := kvschema.GarbageRange()
	var out []GarbageItem
	var derr error
	err := r.Scan(start, end, func(k, v []byte) bool {
		it := GarbageItem{Key: append([]byte(nil), k...)}
		if it.Inode, it.Block, derr = kvschema.DecodeGarbageKey(k); derr != nil {
			return false
		}
		if it.Garbage, derr = kvschema.DecodeGarbage(v); derr != nil {
			return false
		}
		out = append(out, it)
		return len(out) < limit
	})
	return out, orErr(err, derr)
}

// CommittedBlocks returns the ids of the blocks file ino has committed, and
// whether the file exists.
func CommittedBlocks(r kv.Reader, ino uint64) (map[uint64]bool, bool, error) {
	v, ok, err := r.Get(kvschema.InodeKey(ino))
	if err != nil || !ok {
		return nil, false, err
	}
	n, err := kvschema.DecodeInode(v)
	if err != nil {
		return nil, false, err
	}
	bl, err := fileBlocks(r, n)
	ids := make(map[uint64]bool, len(bl))
	for _, b := range bl {
		if b.Owner(ino) == ino { // a concatenated block's object is not under ino
			ids[b.ID] = true
		}
	}
	return ids, true, err
}

// GarbageDone removes garbage queue entries the collector has dealt with.
func GarbageDone(tx kv.Txn, keys [][]byte) error {
	for _, k := range keys {
		if _, _, err := kvschema.DecodeGarbageKey(k); err != nil {
			return pathErr("garbageDone", "", ErrInvalidArgument)
		}
		tx.Delete(k)
	}
	return nil
}
