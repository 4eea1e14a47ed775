package fsimage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Text is the text `hdfs oiv -p Delimited` writes of an image, read as a
// Source: each line's id is its line number. Opening it reads it once, to
// check every line and to know the directories by path; each pass reads it
// again.
type Text struct {
	path  string
	loc   *time.Location
	dirs  map[string]uint64 // directory path → id
	count uint64
	root  uint64
	last  int64 // the last line's number
}

// The Delimited columns, in order; a 13th (the storage policy, with
// -sp) is read past.
const (
	colPath = iota
	colReplication
	colMtime
	colAtime
	colBlockSize
	colBlocks
	colSize
	colNSQuota
	colDSQuota
	colPerm
	colUser
	colGroup
	textColumns
)

// textTime is how the Delimited text writes a time (SimpleDateFormat's
// "yyyy-MM-dd HH:mm").
const textTime = "2006-01-02 15:04"

// maxLine bounds a line: a path of the longest HDFS allows, and the rest.
const maxLine = 64 << 10

// OpenDelimited opens the text at path. Its times are read in loc, the
// time zone of the machine that wrote it (nil: UTC).
func OpenDelimited(path string, loc *time.Location) (*Text, error) {
	if loc == nil {
		loc = time.UTC
	}
	t := &Text{path: path, loc: loc, dirs: map[string]uint64{}}
	var e Entry
	err := t.lines(func(line int64, cols [][]byte) error {
		if err := t.parse(line, cols, &e); err != nil {
			return err
		}
		t.count++
		t.last = line
		p := string(cols[colPath])
		if e.IsDir() {
			if _, dup := t.dirs[p]; dup {
				return textErr(line, "%s is listed twice", p)
			}
			t.dirs[p] = e.ID
		}
		if p == "/" {
			t.root = e.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if t.root == 0 {
		return nil, textErr(0, "no line for the root, /")
	}
	return t, nil
}

// Root implements Source.
func (t *Text) Root() uint64 { return t.root }

// Count implements Source.
func (t *Text) Count() uint64 { return t.count }

// Span implements Source.
func (t *Text) Span() (lo, hi uint64) { return 1, uint64(t.last) }

// IDs implements Source.
func (t *Text) IDs(fn func(id uint64, typ Type) error) error {
	var e Entry
	return t.lines(func(line int64, cols [][]byte) error {
		if err := t.parse(line, cols, &e); err != nil {
			return err
		}
		return fn(e.ID, e.Type)
	})
}

// Children implements Source: each line is a child of the directory its
// path's parent names, which must be a line of its own.
func (t *Text) Children(fn func(parent uint64, children []uint64) error) error {
	kid := make([]uint64, 1)
	return t.lines(func(line int64, cols [][]byte) error {
		p := string(cols[colPath])
		if p == "/" {
			return nil
		}
		i := strings.LastIndexByte(p, '/')
		dir := p[:max(i, 1)]
		parent, ok := t.dirs[dir]
		if !ok {
			return textErr(line, "%s is in %s, which no line lists as a directory", p, dir)
		}
		kid[0] = uint64(line)
		return fn(parent, kid)
	})
}

// Entries implements Source.
func (t *Text) Entries(fn func(*Entry) error) error {
	var e Entry
	return t.lines(func(line int64, cols [][]byte) error {
		if err := t.parse(line, cols, &e); err != nil {
			return err
		}
		return fn(&e)
	})
}

// lines calls fn with the columns of every line but the header.
func (t *Text) lines(fn func(line int64, cols [][]byte) error) error {
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 1<<20))
	sc.Buffer(make([]byte, 64<<10), maxLine)
	cols := make([][]byte, 0, textColumns+1)
	var line int64
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 && bytes.HasPrefix(b, []byte("Path\t")) {
			continue
		}
		cols = cols[:0]
		for c := range bytes.SplitSeq(b, []byte{'\t'}) {
			cols = append(cols, c)
		}
		if len(cols) != textColumns && len(cols) != textColumns+1 {
			return textErr(line, "%d tab-separated columns, where the Delimited text has %d (a tab or newline in a name cannot be read back)", len(cols), textColumns)
		}
		if err := fn(line, cols); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return textErr(line+1, "a line longer than %d bytes", maxLine)
		}
		return err
	}
	return nil
}

// parse reads the columns of one line into e.
func (t *Text) parse(line int64, cols [][]byte, e *Entry) error {
	*e = Entry{ID: uint64(line), NSQuota: NoQuota, DSQuota: NoQuota}
	p := cols[colPath]
	if len(p) == 0 || p[0] != '/' {
		return textErr(line, "%q is not an absolute path", p)
	}
	if len(p) > 1 {
		e.Name = p[bytes.LastIndexByte(p, '/')+1:]
	}
	var err error
	num := func(col int, bits int) uint64 {
		v, perr := strconv.ParseUint(string(cols[col]), 10, bits)
		if perr != nil && err == nil {
			err = textErr(line, "column %d, %q: not a number", col+1, cols[col])
		}
		return v
	}
	quota := func(col int) int64 {
		v, perr := strconv.ParseInt(string(cols[col]), 10, 64)
		if (perr != nil || v < NoQuota) && err == nil {
			err = textErr(line, "column %d, %q: not a quota", col+1, cols[col])
		}
		return v
	}
	e.Replication = uint32(num(colReplication, 32))
	e.BlockSize = num(colBlockSize, 64)
	e.Blocks = uint32(num(colBlocks, 32))
	e.Length = num(colSize, 64)
	nsq, dsq := quota(colNSQuota), quota(colDSQuota)
	e.Mtime, e.Atime = t.time(line, cols[colMtime], &err), t.time(line, cols[colAtime], &err)
	if err != nil {
		return err
	}
	dir, perm, ok := parseMode(cols[colPerm])
	if !ok {
		return textErr(line, "%q is not a permission", cols[colPerm])
	}
	e.Perm, e.User, e.Group = perm, string(cols[colUser]), string(cols[colGroup])
	switch {
	case dir:
		e.Type, e.NSQuota, e.DSQuota = Dir, nsq, dsq
	case e.Replication == 0 && e.BlockSize == 0 && e.Blocks == 0:
		e.Type = Symlink
	default:
		e.Type = File
	}
	return nil
}

func (t *Text) time(line int64, b []byte, err *error) int64 {
	tm, perr := time.ParseInLocation(textTime, string(b), t.loc)
	if perr != nil && *err == nil {
		*err = textErr(line, "%q is not a time as the Delimited text writes one (%s)", b, "yyyy-MM-dd HH:mm")
	}
	return tm.UnixMilli()
}

// parseMode reads a permission as FsPermission writes it: "d" or "-", then
// rwx for user, group and others, the sticky bit as "t" (or "T" without
// x) in the last place, and "+" after it for an ACL.
func parseMode(b []byte) (dir bool, perm uint16, ok bool) {
	b = bytes.TrimSuffix(b, []byte("+"))
	if len(b) != 10 || b[0] != 'd' && b[0] != '-' {
		return false, 0, false
	}
	for i, c := range b[1:] {
		bit := uint16(1) << (8 - i)
		switch {
		case c == "rwx"[i%3]:
			perm |= bit
		case i == 8 && c == 't':
			perm |= bit | 0o1000
		case i == 8 && c == 'T':
			perm |= 0o1000
		case c != '-':
			return false, 0, false
		}
	}
	return b[0] == 'd', perm, true
}

func textErr(line int64, format string, args ...any) error {
	return &FormatError{Section: "line", Offset: line, Err: fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)}
}
