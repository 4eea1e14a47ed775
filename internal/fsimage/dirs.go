package fsimage

import (
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Children implements Source: the INODE_DIR section, each directory's
// children by id, with the references among them (renamed inodes that a
// snapshot still sees) resolved to the inodes they refer to.
func (im *Image) Children(fn func(parent uint64, children []uint64) error) error {
	if err := im.loadRefs(); err != nil {
		return err
	}
	s, err := im.open(sectionDir)
	if err != nil {
		return err
	}
	var kids []uint64
	for {
		msg, at, err := s.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var parent uint64
		kids = kids[:0]
		err = fields(sectionDir, at, msg, func(f field) error {
			switch f.num {
			case 1:
				parent = f.v
				return f.want(protowire.VarintType)
			case 2:
				return f.uints(func(v uint64) { kids = append(kids, v) })
			case 3:
				var bad error
				err := f.uints(func(v uint64) {
					if v >= uint64(len(im.refs)) {
						bad = badField("reference %d, of the %d the image has", v, len(im.refs))
						return
					}
					kids = append(kids, im.refs[v])
				})
				if err != nil {
					return err
				}
				return bad
			}
			return nil
		})
		if err != nil {
			return err
		}
		if parent == 0 {
			return corrupt(sectionDir, at, "a directory entry with no parent")
		}
		if err := fn(parent, kids); err != nil {
			return err
		}
	}
}

// loadRefs reads the INODE_REFERENCE section, once: the inode each
// reference, by its index in the section, refers to.
func (im *Image) loadRefs() error {
	if im.refsRead {
		return nil
	}
	s, err := im.open(sectionReference)
	if err != nil || s == nil {
		im.refsRead = err == nil
		return err
	}
	for {
		msg, at, err := s.next()
		if errors.Is(err, io.EOF) {
			im.refsRead = true
			return nil
		}
		if err != nil {
			return err
		}
		var referred uint64
		err = fields(sectionReference, at, msg, func(f field) error {
			if f.num == 1 {
				referred = f.v
				return f.want(protowire.VarintType)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if referred == 0 {
			return corrupt(sectionReference, at, "a reference to no inode")
		}
		im.refs = append(im.refs, referred)
	}
}
