//go:build !linux

package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// Outside Linux the store keeps no implied-directory marks (every directory
// is a marker, none is pruned), locks nothing and walks paths a component
// at a time (there is no openat2): enough for development machines.

const searchFlags = unix.O_RDONLY

func openat2(int, string, int, uint32) (int, error) { return -1, unix.ENOSYS }

func isImplied(*os.File) (bool, error) { return false, nil }
func setImplied(*os.File) error        { return nil }
func clearImplied(*os.File) error      { return nil }
func lock(*os.File) error              { return nil }

func renameNoReplaceAt(*os.File, string, *os.File, string) error { return errNoReplace }
