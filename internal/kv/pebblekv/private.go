package pebblekv

import (
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/stratafs/strata/internal/privdir"
)

// privateFS is the file system pebble writes through: the OS's, with
// every file it creates 0600 and every directory 0700 (internal/privdir),
// since the namespace's state and the Raft log hold the cluster's
// secrets (docs/security.md, "At rest").
//
// NB: pebble's own creates files 0666 and directories 0755, less the
// umask, and has no say in the mode. privateFS narrows each file it
// creates before pebble writes a byte to it, inside a directory that is
// 0700 already (OpenDB closes it first), so no other user could have
// opened it in between.
type privateFS struct{ vfs.FS }

// Create implements vfs.FS.
func (p privateFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return private(name)(p.FS.Create(name, c))
}

// OpenReadWrite implements vfs.FS: it may create name.
func (p privateFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return private(name)(p.FS.OpenReadWrite(name, c, opts...))
}

// ReuseForWrite implements vfs.FS: it may create newname.
func (p privateFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return private(newname)(p.FS.ReuseForWrite(oldname, newname, c))
}

// Lock implements vfs.FS: it creates name if need be.
func (p privateFS) Lock(name string) (io.Closer, error) {
	l, err := p.FS.Lock(name)
	if err == nil {
		if err = os.Chmod(name, privdir.FileMode); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, err
}

// MkdirAll implements vfs.FS, with 0700 whatever pebble asks.
func (p privateFS) MkdirAll(dir string, _ os.FileMode) error { return privdir.MkdirAll(dir) }

// Unwrap implements vfs.FS.
func (p privateFS) Unwrap() vfs.FS { return p.FS }

// private returns a function that makes the file at name, which a call
// just opened or created, 0600, and passes on the call's result.
func private(name string) func(vfs.File, error) (vfs.File, error) {
	return func(f vfs.File, err error) (vfs.File, error) {
		if err != nil {
			return f, err
		}
		if err := os.Chmod(name, privdir.FileMode); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}
