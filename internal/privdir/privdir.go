// Package privdir keeps what a Strata service writes to disk from the
// host's other users: the directories that hold its state are 0700 and
// their files 0600, whatever existed before and whatever the process's
// umask; and it tells a directory that other users may enter, which a
// service refuses for its data directory as ssh refuses a private key
// that others may read (docs/security.md, "At rest"). It is not
// encryption: root, and whoever reads the disk or its backups, reads
// everything.
package privdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The modes of what the service writes.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// others are the permission bits of a file's group and of everyone else.
const others fs.FileMode = 0o077

// ErrShared is a directory that other users may enter.
var ErrShared = errors.New("open to other users")

// Check returns an error wrapping ErrShared if dir's mode gives its group
// or others any permission: read lets them copy what it holds, search
// lets them open what it holds by name, write lets them replace it. A
// directory that does not exist is fs.ErrNotExist.
func Check(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if perm := info.Mode().Perm(); perm&others != 0 {
		return fmt.Errorf("%s is %w (mode %04o)", dir, ErrShared, perm)
	}
	return nil
}

// MkdirAll creates dir and the parents it lacks 0700, and takes from an
// existing dir every permission of its group and others: for a directory
// the service owns whole.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return narrow(dir)
}

// Close is MkdirAll, and takes every permission of their group and others
// from what dir holds, as far down as it goes: for a directory the service
// owns whole, which an older one may have left open (files 0644 in
// directories 0755). Symbolic links, and what they point to, are left as
// they are.
func Close(dir string) error {
	if err := MkdirAll(dir); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir || !(d.IsDir() || d.Type().IsRegular()) {
			return err
		}
		return narrow(path)
	})
}

// narrow takes every permission of its group and others from path (what
// it links to, if it is a symbolic link).
func narrow(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := info.Mode().Perm(); perm&others != 0 {
		return os.Chmod(path, perm&^others)
	}
	return nil
}

// Shared returns what under root (root excluded) gives its group or
// others any permission, symbolic links aside: what a directory Close
// closed holds none of.
func Shared(root string) ([]string, error) {
	var open []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Mode().Perm()&others != 0 {
			open = append(open, fmt.Sprintf("%s (%04o)", path, info.Mode().Perm()))
		}
		return err
	})
	return open, err
}
