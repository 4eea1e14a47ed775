package seqfile

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Magic is how a SequenceFile starts: "SEQ".
var Magic = []byte("SEQ")

// maxString bounds a class name or a metadata string; maxBuffer a record
// or a compressed block's buffer: a corrupt length must not make the reader
// allocate gigabytes.
const (
	maxString = 64 << 10
	maxBuffer = 256 << 20
)

// Reader reads the records of a SequenceFile.
type Reader struct {
	r        *bufio.Reader
	keyClass string
	valClass string
	key, val writable
	codec    func(io.Reader) (io.Reader, error)
	record   bool // values compressed one by one
	block    bool // records compressed in blocks
	sync     [16]byte
	pending  [][2][]byte // the block's records not yet returned
	err      error
}

// NewReader reads the header of the SequenceFile r holds. A header it
// cannot read (another version, a class or codec it does not know) is an
// error naming what.
func NewReader(r io.Reader) (*Reader, error) {
	sr := &Reader{r: bufio.NewReaderSize(r, 64<<10)}
	var hdr [4]byte
	if _, err := io.ReadFull(sr.r, hdr[:]); err != nil {
		return nil, fmt.Errorf("sequence file: header: %w", err)
	}
	if !bytes.Equal(hdr[:3], Magic) {
		return nil, errors.New("sequence file: not a SequenceFile (no SEQ magic)")
	}
	if hdr[3] != 6 {
		return nil, fmt.Errorf("sequence file: version %d; only version 6 (Hadoop 2 and 3) is read", hdr[3])
	}
	var err error
	if sr.keyClass, err = sr.text(); err != nil {
		return nil, err
	}
	if sr.valClass, err = sr.text(); err != nil {
		return nil, err
	}
	if sr.key, err = writableOf(sr.keyClass); err != nil {
		return nil, err
	}
	if sr.val, err = writableOf(sr.valClass); err != nil {
		return nil, err
	}
	if err := sr.readCompression(); err != nil {
		return nil, err
	}
	if err := sr.skipMetadata(); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(sr.r, sr.sync[:]); err != nil {
		return nil, fmt.Errorf("sequence file: sync marker: %w", err)
	}
	return sr, nil
}

// KeyClass and ValueClass are the Java class names the header names.
func (sr *Reader) KeyClass() string   { return sr.keyClass }
func (sr *Reader) ValueClass() string { return sr.valClass }

func (sr *Reader) readCompression() error {
	var flags [2]byte
	if _, err := io.ReadFull(sr.r, flags[:]); err != nil {
		return fmt.Errorf("sequence file: compression flags: %w", err)
	}
	compressed, block := flags[0] != 0, flags[1] != 0
	if !compressed {
		return nil
	}
	name, err := sr.text()
	if err != nil {
		return err
	}
	if sr.codec, err = Codec(name); err != nil {
		return err
	}
	sr.record, sr.block = !block, block
	return nil
}

func (sr *Reader) skipMetadata() error {
	n, err := sr.int32()
	if err != nil {
		return fmt.Errorf("sequence file: metadata: %w", err)
	}
	if n < 0 || n > 1<<16 {
		return fmt.Errorf("sequence file: metadata of %d entries", n)
	}
	for range 2 * n {
		if _, err := sr.text(); err != nil {
			return err
		}
	}
	return nil
}

// Codec returns the decompressor of Hadoop codec class name (as a
// SequenceFile header names it): DefaultCodec and DeflateCodec (zlib),
// GzipCodec and BZip2Codec. Others are refused, naming the class.
func Codec(name string) (func(io.Reader) (io.Reader, error), error) {
	switch name {
	case "org.apache.hadoop.io.compress.DefaultCodec", "org.apache.hadoop.io.compress.DeflateCodec":
		return func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }, nil
	case "org.apache.hadoop.io.compress.GzipCodec":
		return func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }, nil
	case "org.apache.hadoop.io.compress.BZip2Codec":
		return func(r io.Reader) (io.Reader, error) { return bzip2.NewReader(r), nil }, nil
	}
	return nil, fmt.Errorf("sequence file: compressed with %s, which strata fs cannot decompress (it reads DefaultCodec, GzipCodec and BZip2Codec)", name)
}

// Next returns the next record as FsShell's -text prints it, without the
// newline: key, tab, value. It returns io.EOF after the last.
func (sr *Reader) Next() (string, error) {
	if sr.err != nil {
		return "", sr.err
	}
	k, v, err := sr.next()
	if err != nil {
		sr.err = err
		return "", err
	}
	ks, err := sr.key(k)
	if err != nil {
		return "", fmt.Errorf("sequence file: key of class %s: %w", sr.keyClass, err)
	}
	vs, err := sr.val(v)
	if err != nil {
		return "", fmt.Errorf("sequence file: value of class %s: %w", sr.valClass, err)
	}
	return ks + "\t" + vs, nil
}

func (sr *Reader) next() (key, val []byte, err error) {
	if sr.block {
		return sr.nextInBlock()
	}
	n, err := sr.recordLength()
	if err != nil {
		return nil, nil, err
	}
	klen, err := sr.int32()
	if err != nil {
		return nil, nil, truncated(err)
	}
	if n < 0 || klen < 0 || klen > n || n > maxBuffer {
		return nil, nil, fmt.Errorf("sequence file: a record of %d bytes with a %d-byte key", n, klen)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(sr.r, buf); err != nil {
		return nil, nil, truncated(err)
	}
	key, val = buf[:klen], buf[klen:]
	if sr.record {
		if val, err = sr.inflate(val); err != nil {
			return nil, nil, err
		}
	}
	return key, val, nil
}

// recordLength reads a record's length, passing over sync markers; io.EOF
// where the file ends cleanly.
func (sr *Reader) recordLength() (int32, error) {
	for {
		n, err := sr.int32()
		if err != nil {
			return 0, err // io.EOF at a record's boundary: the end
		}
		if n != -1 {
			return n, nil
		}
		if err := sr.syncMarker(); err != nil {
			return 0, err
		}
	}
}

func (sr *Reader) syncMarker() error {
	var s [16]byte
	if _, err := io.ReadFull(sr.r, s[:]); err != nil {
		return truncated(err)
	}
	if s != sr.sync {
		return errors.New("sequence file: a sync marker that is not the header's (the file is corrupt)")
	}
	return nil
}

func (sr *Reader) nextInBlock() ([]byte, []byte, error) {
	for len(sr.pending) == 0 {
		if err := sr.readBlock(); err != nil {
			return nil, nil, err
		}
	}
	rec := sr.pending[0]
	sr.pending = sr.pending[1:]
	return rec[0], rec[1], nil
}

// readBlock reads the next block of a block-compressed file: a sync
// marker, then its records.
func (sr *Reader) readBlock() error {
	escape, err := sr.int32()
	if err != nil {
		return err // io.EOF: the end
	}
	if escape != -1 {
		return errors.New("sequence file: a block that does not start with a sync marker")
	}
	if err := sr.syncMarker(); err != nil {
		return err
	}
	count, err := readVLong(sr.r)
	if err != nil || count < 0 || count > maxBuffer {
		return fmt.Errorf("sequence file: a block of %d records: %v", count, err)
	}
	var bufs [4][]byte
	for i := range bufs {
		if bufs[i], err = sr.compressedBuffer(); err != nil {
			return err
		}
	}
	keys, err := split(bufs[0], bufs[1], int(count))
	if err != nil {
		return err
	}
	vals, err := split(bufs[2], bufs[3], int(count))
	if err != nil {
		return err
	}
	for i := range keys {
		sr.pending = append(sr.pending, [2][]byte{keys[i], vals[i]})
	}
	return nil
}

func (sr *Reader) compressedBuffer() ([]byte, error) {
	n, err := readVLong(sr.r)
	if err != nil {
		return nil, truncated(err)
	}
	if n < 0 || n > maxBuffer {
		return nil, fmt.Errorf("sequence file: a compressed buffer of %d bytes", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(sr.r, buf); err != nil {
		return nil, truncated(err)
	}
	return sr.inflate(buf)
}

// split cuts data into count pieces whose lengths are the vints of lens.
func split(lens, data []byte, count int) ([][]byte, error) {
	lr := bytes.NewReader(lens)
	out := make([][]byte, 0, count)
	for range count {
		n, err := readVLong(lr)
		if err != nil || n < 0 || n > int64(len(data)) {
			return nil, fmt.Errorf("sequence file: a block's lengths do not match its bytes")
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out, nil
}

func (sr *Reader) inflate(b []byte) ([]byte, error) {
	r, err := sr.codec(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("sequence file: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxBuffer+1))
	if err != nil {
		return nil, fmt.Errorf("sequence file: %w", Explain(err))
	}
	if len(out) > maxBuffer {
		return nil, fmt.Errorf("sequence file: a compressed buffer inflates past %d bytes", maxBuffer)
	}
	return out, nil
}

func (sr *Reader) int32() (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(sr.r, b[:]); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// text reads a Text string: a vint length and UTF-8.
func (sr *Reader) text() (string, error) {
	n, err := readVLong(sr.r)
	if err != nil {
		return "", fmt.Errorf("sequence file: header: %w", truncated(err))
	}
	if n < 0 || n > maxString {
		return "", fmt.Errorf("sequence file: header: a string of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(sr.r, b); err != nil {
		return "", fmt.Errorf("sequence file: header: %w", truncated(err))
	}
	return string(b), nil
}

// truncated makes an io.EOF inside a structure what it is.
func truncated(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("sequence file: truncated: %w", io.ErrUnexpectedEOF)
	}
	return err
}

// readVLong reads Hadoop's WritableUtils vlong: one byte from -112 to 127
// is the value; otherwise the first byte says the sign and how many
// big-endian bytes follow.
func readVLong(r io.ByteReader) (int64, error) {
	first, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	b := int8(first)
	if b >= -112 {
		return int64(b), nil
	}
	neg := b < -120
	n := int(-112 - b)
	if neg {
		n = int(-120 - b)
	}
	var v int64
	for range n {
		c, err := r.ReadByte()
		if err != nil {
			return 0, truncated(err)
		}
		v = v<<8 | int64(c)
	}
	if neg {
		v = ^v
	}
	return v, nil
}

// Explain words a decompressor's error for the user. Hadoop's Java bzip2
// (BZip2Codec without native code) still writes randomized blocks, which
// the bzip2 format deprecated, when a block's data is very repetitive; Go's
// reader refuses them.
func Explain(err error) error {
	var be bzip2.StructuralError
	if errors.As(err, &be) && strings.Contains(string(be), "randomized") {
		return fmt.Errorf("%w: the data holds randomized bzip2 blocks, which Hadoop's Java bzip2 writes for very "+
			"repetitive data and strata fs cannot read (hadoop fs -text can)", err)
	}
	return err
}
