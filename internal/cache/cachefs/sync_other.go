//go:build !linux

package cachefs

import "os"

// datasync falls back to fsync where there is no fdatasync.
func datasync(f *os.File) error { return f.Sync() }

// Allocate does nothing where there is no fallocate: writes may then fail
// for want of space, as the cache's own do.
func (osFile) Allocate(int64) error { return nil }
