//go:build !linux

package localfs

import (
	"io/fs"
	"os"
)

// Outside Linux the store keeps no implied-directory marks (every directory
// is a marker, none is pruned), locks nothing and derives ETags from size
// and modification time only: enough for development machines.

func identity(fi fs.FileInfo) [5]uint64 {
	return [5]uint64{0, 0, uint64(fi.Size()), uint64(fi.ModTime().UnixNano()), 0}
}

func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

func hasXattrs(*os.File) bool              { return false }
func isImplied(*os.File) (bool, error)     { return false, nil }
func setImplied(*os.File) error            { return nil }
func clearImplied(*os.File) error          { return nil }
func lock(*os.File) error                  { return nil }
func renameNoReplace(string, string) error { return errNoReplace }

const openNoFollow = 0
