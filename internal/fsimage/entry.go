package fsimage

import (
	"errors"
	"fmt"
)

// Type is the kind of an inode.
type Type uint8

// Inode kinds, as fsimage.proto numbers them.
const (
	File    Type = 1
	Dir     Type = 2
	Symlink Type = 3
)

func (t Type) String() string {
	switch t {
	case File:
		return "file"
	case Dir:
		return "directory"
	case Symlink:
		return "symlink"
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// NoQuota is the quota of a directory that has none.
const NoQuota = -1

// Entry is one inode of the namespace. Name and Target alias the reader's
// buffer: they are good only until the callback that got the Entry returns.
type Entry struct {
	ID   uint64
	Type Type
	// Name is the inode's name in its directory; empty for the root.
	Name []byte
	// Perm is the mode's 12 low bits (the sticky bit 0o1000 included).
	Perm         uint16
	User, Group  string
	Mtime, Atime int64 // milliseconds since the epoch
	// Files: the length (the sum of the blocks' lengths), the number of
	// blocks, the replication and the preferred block size.
	Length      uint64
	Blocks      uint32
	Replication uint32
	BlockSize   uint64
	// UnderConstruction tells a file that was open for writing when the
	// image was saved; its length is what its blocks held then.
	UnderConstruction bool
	// Directories: the quotas on names (entries below) and on space
	// (bytes times replication), NoQuota for none.
	NSQuota, DSQuota int64
	// Symlinks: where the link points.
	Target []byte
}

// IsDir reports whether the entry is a directory.
func (e *Entry) IsDir() bool { return e.Type == Dir }

// Source is a namespace read in the three passes a bulk load takes: the
// inode ids first, then every directory's children, then the inodes
// themselves. Both forms of an image are one. Each pass may be run more
// than once and gives the same answers each time; a pass stops at the
// first error its callback returns, and returns it.
type Source interface {
	// Root is the id of the root directory.
	Root() uint64
	// Count is the number of inodes IDs will give, as the image states
	// it (the text form counts its lines).
	Count() uint64
	// Span is the range [lo, hi] of the ids.
	Span() (lo, hi uint64)
	// IDs calls fn with every inode's id and type.
	IDs(fn func(id uint64, t Type) error) error
	// Children calls fn with a directory and some of its children, by id;
	// a directory's children may come in several calls. Every inode but
	// the root, and those only snapshots see, is a child once.
	Children(fn func(parent uint64, children []uint64) error) error
	// Entries calls fn with every inode.
	Entries(fn func(*Entry) error) error
}

// FormatError is a part of an image that does not read as it should.
type FormatError struct {
	// Section names the section ("INODE", "INODE_DIR", ...), or the part of
	// the file ("header", "summary"); in the text form, "line".
	Section string
	// Offset is the byte offset in the file where the bad part starts (in
	// a compressed section, in the section's decompressed bytes); in the
	// text form, the line number.
	Offset int64
	Err    error
}

func (e *FormatError) Error() string {
	if e.Section == "line" {
		return fmt.Sprintf("fsimage: line %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("fsimage: %s section, offset %d: %v", e.Section, e.Offset, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ErrCorrupt is what every FormatError wraps, so that a caller can tell a
// bad image from a failure to read it.
var ErrCorrupt = errors.New("the image is corrupt or truncated")

func corrupt(section string, off int64, format string, args ...any) error {
	return &FormatError{Section: section, Offset: off, Err: fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)}
}
