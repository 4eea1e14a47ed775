package bulkload

import (
	"bufio"
	"encoding/binary"
	"errors"
	"os"

	"github.com/stratafs/strata/internal/fsimage"
)

// scratch holds every inode's attributes, written in the order the source
// gives them and read back by offset (the builder keeps each inode's), so
// that the names need not stay in the heap. It is mapped once written.
type scratch struct {
	f    *os.File
	w    *bufio.Writer
	size uint64
	data []byte // the file, mapped, once sealed
	buf  []byte
	done func() error
}

// record is one inode's attributes as the scratch file holds them. Name
// aliases the mapping.
type record struct {
	Name         []byte
	Type         fsimage.Type
	UC           bool
	Perm         uint16
	User, Group  uint32 // indexes into the builder's names
	Mtime, Atime int64
	Length       uint64
	Replication  uint32
	BlockSize    uint64
	NSQuota      int64
	DSQuota      int64
}

func newScratch(path string) (*scratch, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return &scratch{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// add appends e's record and returns its offset.
func (s *scratch) add(e *fsimage.Entry, user, group uint32) (uint64, error) {
	b := s.buf[:0]
	b = binary.AppendUvarint(b, uint64(len(e.Name)))
	b = append(b, e.Name...)
	flags := byte(0)
	if e.UnderConstruction {
		flags = 1
	}
	b = append(b, byte(e.Type), flags)
	b = binary.AppendUvarint(b, uint64(e.Perm))
	b = binary.AppendUvarint(b, uint64(user))
	b = binary.AppendUvarint(b, uint64(group))
	b = binary.AppendVarint(b, e.Mtime)
	b = binary.AppendVarint(b, e.Atime)
	b = binary.AppendUvarint(b, e.Length)
	b = binary.AppendUvarint(b, uint64(e.Replication))
	b = binary.AppendUvarint(b, e.BlockSize)
	b = binary.AppendVarint(b, e.NSQuota)
	b = binary.AppendVarint(b, e.DSQuota)
	s.buf = b
	off := s.size
	if _, err := s.w.Write(b); err != nil {
		return 0, err
	}
	s.size += uint64(len(b))
	return off, nil
}

// seal flushes the file and maps it for reading.
func (s *scratch) seal() error {
	if err := s.w.Flush(); err != nil {
		return err
	}
	data, done, err := mapFile(s.f, int64(s.size))
	s.data, s.done = data, done
	return err
}

// close unmaps and closes the file (which the builder removes).
func (s *scratch) close() error {
	var err error
	if s.done != nil {
		err = s.done()
	}
	return errors.Join(err, s.f.Close())
}

// name returns the name of the record at off.
func (s *scratch) name(off uint64) []byte {
	n, k := binary.Uvarint(s.data[off:])
	return s.data[off+uint64(k) : off+uint64(k)+n]
}

// read decodes the record at off. The file is the builder's own, written
// by add: it decodes without checks.
func (s *scratch) read(off uint64, r *record) {
	b := s.data[off:]
	n, k := binary.Uvarint(b)
	r.Name, b = b[k:k+int(n)], b[k+int(n):]
	r.Type, r.UC, b = fsimage.Type(b[0]), b[1] == 1, b[2:]
	u := func() uint64 { v, k := binary.Uvarint(b); b = b[k:]; return v }
	i := func() int64 { v, k := binary.Varint(b); b = b[k:]; return v }
	r.Perm, r.User, r.Group = uint16(u()), uint32(u()), uint32(u())
	r.Mtime, r.Atime = i(), i()
	r.Length, r.Replication, r.BlockSize = u(), uint32(u()), u()
	r.NSQuota, r.DSQuota = i(), i()
}
