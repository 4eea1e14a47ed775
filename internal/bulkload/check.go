package bulkload

import (
	"errors"
	"fmt"

	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/kv/pebblekv"
	"github.com/stratafs/strata/internal/kvschema"
)

// ErrBadTable is a table that no build of the import could have written.
var ErrBadTable = errors.New("bulkload: not a table of the import")

// Check reads the table at path as the service does before it keeps it:
// only keys set (pebblekv.VerifyTable), each one a build of the import
// whose ids are base..base+count-1 writes, with a value that decodes: an
// entry of one of its directories naming one of its inodes, one of its
// inodes (with a directory's quotas). It returns how many keys it
// read. What it cannot tell (that the sums are right, that every inode has
// its entry) a table's builder vouches for, as a superuser's request.
func Check(path string, base, count uint64) (uint64, error) {
	in := func(id uint64) bool { return id >= base && id-base < count }
	var keys uint64
	err := pebblekv.VerifyTable(path, func(k, v []byte) error {
		keys++
		if err := checkKV(k, v, in); err != nil {
			return fmt.Errorf("%w: key %x: %v", ErrBadTable, k, err)
		}
		return nil
	})
	return keys, err
}

func checkKV(k, v []byte, in func(uint64) bool) error {
	id, err := kvschema.KeyID(k)
	if err != nil {
		return err
	}
	if !in(id) {
		return fmt.Errorf("inode %d is not among the import's", id)
	}
	switch {
	case kvschema.IsDentryKey(k):
		name, _ := kvschema.DentryName(k)
		if err := fspath.CheckName(name); err != nil {
			return err
		}
		d, err := kvschema.DecodeDentry(v)
		if err != nil || !in(d.Child) {
			return fmt.Errorf("an entry naming inode %d (%v)", d.Child, err)
		}
		return nil
	case kvschema.IsInodeKey(k):
		n, err := kvschema.DecodeInode(v)
		if err != nil || n.ID != id || n.Parent != 0 && !in(n.Parent) || n.Holder != "" || n.Inline || n.Blocks != 0 {
			return fmt.Errorf("an inode record that is not an imported one (%v)", err)
		}
		return nil
	}
	return errors.New("a key of a kind an import does not write")
}
