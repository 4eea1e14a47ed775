//go:build !linux

package cachefs

import "os"

// datasync falls back to fsync where there is no fdatasync.
func datasync(f *os.File) error { return f.Sync() }
