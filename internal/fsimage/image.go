package fsimage

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// magic begins every protobuf image (HDFS 2.4 and later).
const magic = "HDFSIMG1"

// Section names the reader uses.
const (
	sectionInode     = "INODE"
	sectionDir       = "INODE_DIR"
	sectionReference = "INODE_REFERENCE"
	sectionStrings   = "STRING_TABLE"
)

// Codecs Hadoop may name in the summary, and the one Go reader of each.
var codecs = map[string]func(io.Reader) (io.Reader, error){
	"org.apache.hadoop.io.compress.DefaultCodec": func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
	"org.apache.hadoop.io.compress.GzipCodec":    func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
}

// ErrUnsupported is an image this reader does not read (a legacy format, a
// codec it lacks); the error that wraps it says what to do instead.
var ErrUnsupported = errors.New("fsimage: not supported")

// SectionInfo is one entry of the image's section index.
type SectionInfo struct {
	Name           string
	Offset, Length int64
}

// Info is what the image's summary and headers say of it.
type Info struct {
	OnDiskVersion uint32
	// LayoutVersion is the NameNode's layout version (negative: -66 for
	// Hadoop 3.3 and 3.4).
	LayoutVersion int32
	Codec         string // "" when uncompressed
	Sections      []SectionInfo
	// Inodes is the number of inodes the INODE section holds (those only
	// snapshots see included); LastInodeID the last id HDFS gave out.
	Inodes, LastInodeID uint64
}

// Image is an open binary fsimage. Its passes read the file again each
// time; it is safe for one pass at a time.
type Image struct {
	f        *os.File
	info     Info
	sections map[string]SectionInfo
	decoder  func(io.Reader) (io.Reader, error)
	strings  stringTable
	refs     []uint64 // INODE_REFERENCE: the inode each reference refers to
	refsRead bool
}

// Open opens the image at path and reads its index, its string table and
// the header of its INODE section.
func Open(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	im := &Image{f: f, sections: map[string]SectionInfo{}}
	if err := im.load(); err != nil {
		f.Close()
		return nil, err
	}
	return im, nil
}

// Close closes the file.
func (im *Image) Close() error { return im.f.Close() }

// Info returns what the image says of itself.
func (im *Image) Info() Info { return im.info }

// Root implements Source: HDFS's root is always inode 16385.
func (im *Image) Root() uint64 { return rootID }

// rootID is INodeId.ROOT_INODE_ID.
const rootID = 16385

// Count implements Source.
func (im *Image) Count() uint64 { return im.info.Inodes }

// Span implements Source: HDFS gives ids from the root's up.
func (im *Image) Span() (lo, hi uint64) { return rootID, im.info.LastInodeID }

func (im *Image) load() error {
	st, err := im.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	head := make([]byte, len(magic))
	if _, err := im.f.ReadAt(head, 0); err != nil || string(head) != magic {
		if err == nil && size >= 4 && int32(binary.BigEndian.Uint32(head)) < 0 {
			return fmt.Errorf("%w: a legacy (pre-protobuf) image, layout version %d: save it with HDFS 2.4 or later",
				ErrUnsupported, int32(binary.BigEndian.Uint32(head)))
		}
		return corrupt("header", 0, "the file does not begin with %q: not an HDFS image", magic)
	}
	summaryAt, err := im.loadSummary(size)
	if err != nil {
		return err
	}
	if err := im.index(summaryAt); err != nil {
		return err
	}
	if err := im.loadStrings(); err != nil {
		return err
	}
	return im.loadInodeHeader()
}

// loadSummary reads the FileSummary that the file's last 4 bytes give the
// length of, and returns its offset.
func (im *Image) loadSummary(size int64) (int64, error) {
	if size < int64(len(magic))+4+2 {
		return 0, corrupt("summary", size, "the file is %d bytes: too short to hold a summary", size)
	}
	var tail [4]byte
	if _, err := im.f.ReadAt(tail[:], size-4); err != nil {
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(tail[:]))
	at := size - 4 - n
	if n <= 0 || at < int64(len(magic)) {
		return 0, corrupt("summary", size-4, "a summary of %d bytes in a file of %d", n, size)
	}
	b := make([]byte, n)
	if _, err := im.f.ReadAt(b, at); err != nil {
		return 0, err
	}
	body, k := protowire.ConsumeBytes(b)
	if k != len(b) {
		return 0, corrupt("summary", at, "the summary's length prefix does not match the %d bytes the file's end gives it", n)
	}
	at += int64(k - len(body))
	err := fields("summary", at, body, func(f field) error {
		switch f.num {
		case 1:
			im.info.OnDiskVersion = uint32(f.v)
			return f.want(protowire.VarintType)
		case 2:
			im.info.LayoutVersion = int32(uint32(f.v))
			return f.want(protowire.VarintType)
		case 3:
			im.info.Codec = string(f.data)
			return f.want(protowire.BytesType)
		case 4:
			if err := f.want(protowire.BytesType); err != nil {
				return err
			}
			s, err := sectionOf(f.data)
			im.info.Sections = append(im.info.Sections, s)
			return err
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if im.info.OnDiskVersion != 1 {
		return 0, fmt.Errorf("%w: on-disk version %d (this reader knows 1)", ErrUnsupported, im.info.OnDiskVersion)
	}
	return size - 4 - n, nil
}

func sectionOf(b []byte) (SectionInfo, error) {
	var s SectionInfo
	err := fields("summary", 0, b, func(f field) error {
		switch f.num {
		case 1:
			s.Name = string(f.data)
		case 2:
			s.Length = int64(f.v)
		case 3:
			s.Offset = int64(f.v)
		}
		return nil
	})
	if err != nil || s.Length < 0 || s.Offset < 0 {
		return s, badField("a section entry that does not parse")
	}
	return s, nil
}

// index checks the sections against the file and keeps those it reads.
func (im *Image) index(summaryAt int64) error {
	for _, s := range im.info.Sections {
		if s.Offset < int64(len(magic)) || s.Length > summaryAt-s.Offset {
			return corrupt("summary", summaryAt, "section %s at offset %d, %d bytes long, is not inside the file's %d bytes of sections",
				s.Name, s.Offset, s.Length, summaryAt)
		}
		if _, dup := im.sections[s.Name]; !dup {
			im.sections[s.Name] = s
		}
	}
	for _, name := range []string{sectionInode, sectionDir, sectionStrings} {
		if _, ok := im.sections[name]; !ok {
			return corrupt("summary", summaryAt, "the image has no %s section", name)
		}
	}
	if im.info.Codec == "" {
		return nil
	}
	im.decoder = codecs[im.info.Codec]
	if im.decoder == nil {
		return fmt.Errorf("%w: the image's sections are compressed with %s; this reader decompresses %s: save the image uncompressed (dfs.image.compress=false)",
			ErrUnsupported, im.info.Codec, "DefaultCodec and GzipCodec")
	}
	if _, sub := im.sections["INODE_SUB"]; sub {
		return fmt.Errorf("%w: a compressed image saved in parallel sub-sections: save it uncompressed, or with dfs.image.parallel.save=false",
			ErrUnsupported)
	}
	return nil
}

// open returns a stream of the messages of section name.
func (im *Image) open(name string) (*stream, error) {
	s, ok := im.sections[name]
	if !ok {
		return nil, nil
	}
	sr := io.NewSectionReader(im.f, s.Offset, s.Length)
	if im.decoder == nil {
		return &stream{r: bufio.NewReaderSize(sr, 1<<20), section: name, base: s.Offset, limit: s.Length}, nil
	}
	d, err := im.decoder(bufio.NewReaderSize(sr, 1<<20))
	if err != nil {
		return nil, corrupt(name, 0, "the compressed section does not begin as %s does: %v", im.info.Codec, err)
	}
	return &stream{r: bufio.NewReaderSize(d, 1<<20), section: name, limit: -1}, nil
}

// loadInodeHeader reads the INODE section's first message.
func (im *Image) loadInodeHeader() error {
	s, err := im.open(sectionInode)
	if err != nil {
		return err
	}
	msg, at, err := s.next()
	if errors.Is(err, io.EOF) {
		return corrupt(sectionInode, at, "the section is empty")
	}
	if err != nil {
		return err
	}
	return fields(sectionInode, at, msg, func(f field) error {
		switch f.num {
		case 1:
			im.info.LastInodeID = f.v
		case 2:
			im.info.Inodes = f.v
		}
		return f.want(protowire.VarintType)
	})
}

// stringTable holds the STRING_TABLE section: the names of users and groups.
type stringTable struct {
	byID     map[uint32]string
	maskBits uint32
}

// kinds of strings, as SerialNumberManager numbers them.
const (
	kindUser  = 1
	kindGroup = 2
)

// lookup returns the string of the given kind and serial number.
func (t *stringTable) lookup(kind, id uint32) (string, bool) {
	if t.maskBits != 0 {
		id |= kind << (32 - t.maskBits)
	}
	s, ok := t.byID[id]
	return s, ok
}

func (im *Image) loadStrings() error {
	s, err := im.open(sectionStrings)
	if err != nil {
		return err
	}
	msg, at, err := s.next()
	if errors.Is(err, io.EOF) {
		return corrupt(sectionStrings, at, "the section is empty")
	}
	if err != nil {
		return err
	}
	var count uint64
	err = fields(sectionStrings, at, msg, func(f field) error {
		switch f.num {
		case 1:
			count = f.v
		case 2:
			im.strings.maskBits = uint32(f.v)
			if f.v >= 32 {
				return badField("%d mask bits", f.v)
			}
		}
		return f.want(protowire.VarintType)
	})
	if err != nil {
		return err
	}
	im.strings.byID = make(map[uint32]string, min(count, 1<<16))
	for i := uint64(0); i < count; i++ {
		msg, at, err := s.next()
		if errors.Is(err, io.EOF) {
			return corrupt(sectionStrings, at, "the section ends after %d of its %d strings", i, count)
		}
		if err != nil {
			return err
		}
		var id uint32
		var str []byte
		err = fields(sectionStrings, at, msg, func(f field) error {
			switch f.num {
			case 1:
				id = uint32(f.v)
				return f.want(protowire.VarintType)
			case 2:
				str = f.data
				return f.want(protowire.BytesType)
			}
			return nil
		})
		if err != nil {
			return err
		}
		im.strings.byID[id] = string(bytes.Clone(str))
	}
	return nil
}
