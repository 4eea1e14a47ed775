package fsimage

import (
	"errors"
	"io"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// IDs implements Source.
func (im *Image) IDs(fn func(id uint64, t Type) error) error {
	var e Entry
	return im.inodes(func(msg []byte, at int64) error {
		if err := im.parseInode(msg, at, &e, false); err != nil {
			return err
		}
		return fn(e.ID, e.Type)
	})
}

// Entries implements Source.
func (im *Image) Entries(fn func(*Entry) error) error {
	var e Entry
	return im.inodes(func(msg []byte, at int64) error {
		if err := im.parseInode(msg, at, &e, true); err != nil {
			return err
		}
		return fn(&e)
	})
}

// inodes calls fn with each INode message of the INODE section: as many as
// its header says, and nothing after them.
func (im *Image) inodes(fn func(msg []byte, at int64) error) error {
	s, err := im.open(sectionInode)
	if err != nil {
		return err
	}
	if _, _, err := s.next(); err != nil { // the header, read at Open
		return err
	}
	for i := uint64(0); i < im.info.Inodes; i++ {
		msg, at, err := s.next()
		if errors.Is(err, io.EOF) {
			return corrupt(sectionInode, at, "the section ends after %d of its %d inodes", i, im.info.Inodes)
		}
		if err != nil {
			return err
		}
		if err := fn(msg, at); err != nil {
			return err
		}
	}
	if _, at, err := s.next(); !errors.Is(err, io.EOF) {
		if err != nil {
			return err
		}
		return corrupt(sectionInode, at, "more inodes than the %d the section's header gives", im.info.Inodes)
	}
	return nil
}

// parseInode decodes an INode message into e; without full, only its type
// and id (and checks only those).
func (im *Image) parseInode(msg []byte, at int64, e *Entry, full bool) error {
	*e = Entry{NSQuota: NoQuota, DSQuota: NoQuota}
	var body field
	err := fields(sectionInode, at, msg, func(f field) error {
		switch f.num {
		case 1:
			e.Type = Type(f.v)
			return f.want(protowire.VarintType)
		case 2:
			e.ID = f.v
			return f.want(protowire.VarintType)
		case 3:
			e.Name = f.data
			return f.want(protowire.BytesType)
		case 4, 5, 6:
			body = f
			return f.want(protowire.BytesType)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.Type < File || e.Type > Symlink {
		return corrupt(sectionInode, at, "an inode of unknown type %d", e.Type)
	}
	if e.ID == 0 {
		return corrupt(sectionInode, at, "an inode with no id")
	}
	if !full {
		return nil
	}
	if body.data == nil || body.num != protowire.Number(e.Type)+3 {
		return corrupt(sectionInode, at, "inode %d, a %s, has no %s part", e.ID, e.Type, e.Type)
	}
	bodyAt := at + int64(offsetIn(msg, body.data))
	switch e.Type {
	case File:
		return im.parseFile(body.data, bodyAt, e)
	case Dir:
		return im.parseDir(body.data, bodyAt, e)
	}
	return im.parseSymlink(body.data, bodyAt, e)
}

// offsetIn returns where sub, a slice of b, starts in b.
func offsetIn(b, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	return cap(b) - cap(sub)
}

func (im *Image) parseFile(b []byte, at int64, e *Entry) error {
	perm := false
	err := fields(sectionInode, at, b, func(f field) error {
		switch f.num {
		case 1:
			if f.v > math.MaxUint32 {
				return badField("replication %d", f.v)
			}
			e.Replication = uint32(f.v)
		case 2:
			e.Mtime = int64(f.v)
		case 3:
			e.Atime = int64(f.v)
		case 4:
			e.BlockSize = f.v
		case 5:
			perm = true
			if err := f.want(protowire.Fixed64Type); err != nil {
				return err
			}
			return im.permission(f.v, e)
		case 6:
			if err := f.want(protowire.BytesType); err != nil {
				return err
			}
			return e.addBlock(f.data)
		case 7:
			e.UnderConstruction = true
			return f.want(protowire.BytesType)
		default:
			return nil
		}
		return f.want(protowire.VarintType)
	})
	if err == nil && !perm {
		err = corrupt(sectionInode, at, "file %d has no permission", e.ID)
	}
	return err
}

// addBlock adds a BlockProto's length (field 3) to the file's.
func (e *Entry) addBlock(b []byte) error {
	var n uint64
	err := fields(sectionInode, 0, b, func(f field) error {
		if f.num == 3 {
			n = f.v
			return f.want(protowire.VarintType)
		}
		return nil
	})
	if err != nil {
		return badField("a block that does not parse")
	}
	if e.Length+n < e.Length || e.Blocks == math.MaxUint32 {
		return badField("blocks adding up to more than a file can hold")
	}
	e.Length += n
	e.Blocks++
	return nil
}

func (im *Image) parseDir(b []byte, at int64, e *Entry) error {
	perm := false
	err := fields(sectionInode, at, b, func(f field) error {
		switch f.num {
		case 1:
			e.Mtime = int64(f.v)
		case 2, 3:
			q := int64(f.v)
			if q < NoQuota {
				return badField("quota %d", q)
			}
			if f.num == 2 {
				e.NSQuota = q
			} else {
				e.DSQuota = q
			}
		case 4:
			perm = true
			if err := f.want(protowire.Fixed64Type); err != nil {
				return err
			}
			return im.permission(f.v, e)
		default:
			return nil
		}
		return f.want(protowire.VarintType)
	})
	if err == nil && !perm {
		err = corrupt(sectionInode, at, "directory %d has no permission", e.ID)
	}
	return err
}

func (im *Image) parseSymlink(b []byte, at int64, e *Entry) error {
	return fields(sectionInode, at, b, func(f field) error {
		switch f.num {
		case 1:
			if err := f.want(protowire.Fixed64Type); err != nil {
				return err
			}
			return im.permission(f.v, e)
		case 2:
			e.Target = f.data
			return f.want(protowire.BytesType)
		case 3:
			e.Mtime = int64(f.v)
		case 4:
			e.Atime = int64(f.v)
		default:
			return nil
		}
		return f.want(protowire.VarintType)
	})
}

// permission unpacks a permission word: user id in bits 40-63, group id in
// 16-39, mode in 0-15.
func (im *Image) permission(w uint64, e *Entry) error {
	const idMask = 1<<24 - 1
	mode := w & 0xffff
	if mode > 0o7777 {
		return badField("mode %o", mode)
	}
	e.Perm = uint16(mode)
	var ok bool
	if e.User, ok = im.strings.lookup(kindUser, uint32(w>>40&idMask)); !ok {
		return badField("user string %d is not in the string table", w>>40&idMask)
	}
	if e.Group, ok = im.strings.lookup(kindGroup, uint32(w>>16&idMask)); !ok {
		return badField("group string %d is not in the string table", w>>16&idMask)
	}
	return nil
}
