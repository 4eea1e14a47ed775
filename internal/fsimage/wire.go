package fsimage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxMessage bounds one length-delimited message, as protobuf's default
// limit bounds it in Hadoop (fsimage.proto: "A single DirEntry needs to fit
// in the default PB max message size of 64MB").
const maxMessage = 64 << 20

// stream reads the length-delimited messages of one section.
type stream struct {
	r       *bufio.Reader
	section string
	// base is the offset in the file of the section's first byte (0 for a
	// compressed section, whose offsets are in its decompressed bytes);
	// pos counts the bytes read since.
	base, pos int64
	// limit is the section's length, -1 when compressed (unknown).
	limit int64
	buf   []byte
}

// at is the offset of the next byte, as errors report it.
func (s *stream) at() int64 { return s.base + s.pos }

// next reads a message. It returns io.EOF at the end of the section, and a
// FormatError for a message cut short or longer than the section holds.
// The message is good until the next call.
func (s *stream) next() (msg []byte, at int64, err error) {
	at = s.at()
	if s.limit >= 0 && s.pos == s.limit {
		return nil, at, io.EOF
	}
	n, err := binary.ReadUvarint(byteCounter{s})
	switch {
	case errors.Is(err, io.EOF) && s.limit < 0 && s.at() == at:
		return nil, at, io.EOF
	case err != nil:
		return nil, at, s.bad(at, "a message's length: %v", truncated(err))
	case n > maxMessage:
		return nil, at, s.bad(at, "a message of %d bytes, more than the %d a message may have", n, maxMessage)
	case s.limit >= 0 && int64(n) > s.limit-s.pos:
		return nil, at, s.bad(at, "a message of %d bytes where the section has %d left", n, s.limit-s.pos)
	}
	if cap(s.buf) < int(n) {
		s.buf = make([]byte, n)
	}
	s.buf = s.buf[:n]
	body := s.at()
	if _, err := io.ReadFull(s.r, s.buf); err != nil {
		return nil, at, s.bad(body, "a message of %d bytes: %v", n, truncated(err))
	}
	s.pos += int64(n)
	return s.buf, body, nil
}

// bad is a FormatError of the section at offset at.
func (s *stream) bad(at int64, format string, args ...any) error {
	return corrupt(s.section, at, format, args...)
}

func truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the section ends inside it")
	}
	return err
}

// byteCounter reads bytes of s one at a time for ReadUvarint, counting them.
type byteCounter struct{ s *stream }

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.s.r.ReadByte()
	if err == nil {
		b.s.pos++
		if b.s.limit >= 0 && b.s.pos > b.s.limit {
			return 0, io.ErrUnexpectedEOF
		}
	}
	return c, err
}

// field is one field of a message: a varint or fixed value in v, the bytes
// of a length-delimited one in data.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	v    uint64
	data []byte
}

// fields calls fn with each field of message b, whose first byte is at
// offset at of section; a field that does not parse is a FormatError. fn's
// error is returned as it is, or, if it is a fieldError, as a FormatError
// at the field.
func fields(section string, at int64, b []byte, fn func(f field) error) error {
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return corrupt(section, at+int64(pos), "a field's tag: %v", protowire.ParseError(n))
		}
		f := field{num: num, typ: typ}
		start := pos
		pos += n
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b[pos:])
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b[pos:])
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b[pos:])
			f.v = uint64(v)
		case protowire.BytesType:
			f.data, n = protowire.ConsumeBytes(b[pos:])
		default:
			n = protowire.ConsumeFieldValue(num, typ, b[pos:])
		}
		if n < 0 {
			return corrupt(section, at+int64(start), "field %d: %v", num, protowire.ParseError(n))
		}
		pos += n
		if err := fn(f); err != nil {
			var fe fieldError
			if errors.As(err, &fe) {
				return corrupt(section, at+int64(start), "field %d: %s", num, fe.msg)
			}
			return err
		}
	}
	return nil
}

// fieldError is what a callback of fields returns for a field whose value
// is wrong, to be reported at the field's offset.
type fieldError struct{ msg string }

func (e fieldError) Error() string { return e.msg }

func badField(format string, args ...any) error { return fieldError{fmt.Sprintf(format, args...)} }

// want checks that f has the wire type the schema gives it.
func (f field) want(t protowire.Type) error {
	if f.typ != t {
		return badField("wire type %d where the schema has %d", f.typ, t)
	}
	return nil
}

// uints calls fn with each value of a repeated varint field, packed or not.
func (f field) uints(fn func(uint64)) error {
	if f.typ == protowire.VarintType {
		fn(f.v)
		return nil
	}
	if f.typ != protowire.BytesType {
		return badField("wire type %d for a repeated integer", f.typ)
	}
	for b := f.data; len(b) > 0; {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return badField("a packed integer: %v", protowire.ParseError(n))
		}
		fn(v)
		b = b[n:]
	}
	return nil
}
