package object

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key, in bytes, that every backend accepts (S3's limit).
const MaxKeyLen = 1024

// ValidateKey checks the key rules shared by all backends: non-empty, at most
// MaxKeyLen bytes of UTF-8 without NUL, relative, and made of slash-separated
// components none of which is empty, "." or "..", except that the key may
// end in one "/" (a directory marker, see IsMarker). The rules are those of
// a path that cannot escape a directory, so a local directory can hold any
// valid key, and the same key is valid everywhere.
func ValidateKey(key string) error {
	switch {
	case key == "" || key == "/":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidKey)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("%w: contains NUL", ErrInvalidKey)
	}
	for c := range strings.SplitSeq(strings.TrimSuffix(key, "/"), "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Errorf("%w: empty, \".\" or \"..\" path component", ErrInvalidKey)
		}
	}
	return nil
}

// IsMarker reports whether key names a directory marker: a zero-length
// object whose key ends in "/", which S3A and the S3 console write for an
// empty directory. Markers are objects like any other on S3 and in mem; a
// local directory (localfs) holds them as directories.
func IsMarker(key string) bool { return strings.HasSuffix(key, "/") }

// ValidatePut checks a Put (or the start of an upload) of size bytes to key:
// a valid key, a size that is not negative, and nothing but size 0 for a
// marker.
func ValidatePut(key string, size int64) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	switch {
	case size < 0:
		return fmt.Errorf("%w: negative size %d", ErrSizeMismatch, size)
	case size > 0 && IsMarker(key):
		return fmt.Errorf("%w: a directory marker (a key ending in \"/\") holds no bytes", ErrInvalidKey)
	}
	return nil
}

// ValidateUpload checks the key of a multipart upload: valid, and no marker
// (which holds no bytes).
func ValidateUpload(key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if IsMarker(key) {
		return fmt.Errorf("%w: no multipart upload to a directory marker", ErrInvalidKey)
	}
	return nil
}

// ValidatePart checks an UploadPart of size bytes as part num of an upload to
// key: a part number in 1..MaxParts and a size that is not negative.
func ValidatePart(key string, num int, size int64) error {
	if num < 1 || num > MaxParts {
		return fmt.Errorf("part number %d out of range 1..%d", num, MaxParts)
	}
	if err := ValidateUpload(key); err != nil {
		return err
	}
	return ValidatePut(key, size)
}

// ValidateCopy checks the keys of a Copy: valid, distinct, and both markers
// or neither.
func ValidateCopy(src, dst string) error {
	if err := ValidateKey(src); err != nil {
		return err
	}
	if err := ValidateKey(dst); err != nil {
		return err
	}
	switch {
	case src == dst:
		return fmt.Errorf("%w: copy of an object onto itself", ErrInvalidKey)
	case IsMarker(src) != IsMarker(dst):
		return fmt.Errorf("%w: copy between a directory marker and an object", ErrInvalidKey)
	}
	return nil
}

// ClampRange resolves a Get range against an object of size bytes, following
// the Store.Get contract, and returns the start and byte count to serve.
func ClampRange(size, off, length int64) (start, n int64, err error) {
	if off < 0 || off > size {
		return 0, 0, fmt.Errorf("%w: offset %d, object size %d", ErrInvalidRange, off, size)
	}
	n = size - off
	if length >= 0 && length < n {
		n = length
	}
	return off, n, nil
}

// SizedReader returns a reader of exactly size bytes from r: it fails with
// ErrSizeMismatch if r ends early, and if r holds more it fails before
// handing out the last byte, so that a backend streaming the body never sees
// a complete body of the wrong size. A nil r is an empty body.
func SizedReader(r io.Reader, size int64) io.Reader {
	if r == nil {
		r = eof{}
	}
	return &sizedReader{r: r, left: size}
}

type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }

type sizedReader struct {
	r    io.Reader
	left int64
	err  error // sticky: io.EOF once the end is verified, or the failure
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.left == 0 { // only for size 0: larger bodies verify the end below
		s.err = s.checkEnd()
		return 0, s.err
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	switch {
	case s.left == 0:
		// NB: probe for extra bytes now, not on the next call, or the caller
		// would already hold a full-sized body when the mismatch shows.
		if s.err = s.checkEnd(); s.err != io.EOF {
			return 0, s.err
		}
		return n, nil
	case err == io.EOF:
		s.err = fmt.Errorf("%w: %d bytes missing", ErrSizeMismatch, s.left)
		return n, s.err
	}
	return n, err
}

// checkEnd returns io.EOF if r is exhausted, reading at most one byte.
func (s *sizedReader) checkEnd() error {
	var b [1]byte
	for range 100 {
		n, err := s.r.Read(b[:])
		switch {
		case n > 0:
			return fmt.Errorf("%w: body longer than declared", ErrSizeMismatch)
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}

// AfterEntry reports whether key sorts after last, the key of a ListDir
// entry: after it in byte order and, if last is a common prefix (ends in
// "/"), not under it. Stores whose ListDir tokens are the last entry's key
// (mem, localfs) page with it; last "" is before every key.
func AfterEntry(key, last string) bool {
	if last == "" {
		return true
	}
	return key > last && !(IsMarker(last) && strings.HasPrefix(key, last))
}
