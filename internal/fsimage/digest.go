package fsimage

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrDigest is an image whose bytes are not those its MD5 file vouches for.
var ErrDigest = errors.New("the image does not match its MD5 file")

// DigestPath is where HDFS writes the MD5 of the image at path.
func DigestPath(path string) string { return path + ".md5" }

// CheckDigest hashes the image at path and compares the digest with the
// one in the MD5 file sum (HDFS's fsimage_N.md5: "HEX *NAME"). progress, if
// set, is told how many bytes were hashed so far, now and then.
func CheckDigest(path, sum string, progress func(done int64)) error {
	want, err := readDigest(sum)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := md5.New()
	buf := make([]byte, 4<<20)
	var done int64
	for {
		n, err := f.Read(buf)
		h.Write(buf[:n])
		done += int64(n)
		if progress != nil {
			progress(done)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return fmt.Errorf("%w: %s says %x, the file's %d bytes hash to %x (a byte changed somewhere: the digest cannot say where)",
			ErrDigest, sum, want, done, got)
	}
	return nil
}

func readDigest(sum string) ([]byte, error) {
	b, err := os.ReadFile(sum)
	if err != nil {
		return nil, err
	}
	hexText, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte(" "))
	want, err := hex.DecodeString(string(hexText))
	if err != nil || len(want) != md5.Size {
		return nil, fmt.Errorf("%s: not an MD5 file (want 32 hex digits, a space and the image's name)", sum)
	}
	return want, nil
}
