package fsshell

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/stratafs/strata/internal/seqfile"
)

// runChecksum is -checksum [-v] <src> ..., Hadoop's Display.Checksum: for
// each file its path, the checksum's algorithm and bytes in hex, and with
// -v its block size. Strata's checksums are HDFS's COMPOSITE-CRC32C
// (client.FileChecksum), from the CRCs the workers keep.
func runChecksum(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "v")
	return sh.eachMatch(cf, args, func(item *pathData) error {
		return sh.checksum(item, cf.opt("v"))
	})
}

func (sh *shell) checksum(item *pathData, blockSize bool) error {
	switch {
	case !item.exists():
		return errNotFound(item.text)
	case item.isDir():
		return errPath(item.text, msgIsDir)
	}
	sum, err := sh.fs.Checksum(sh.ctx, item.uri())
	if err != nil {
		return sh.explain(item.text, item.abs, err)
	}
	line := fmt.Sprintf("%s\t%s\t%s", item.text, sum.Algorithm(), hex.EncodeToString(sum.Bytes()))
	if blockSize {
		line += fmt.Sprintf("\tBlockSize=%d", item.st.BlockSize)
	}
	sh.printf("%s\n", line)
	return nil
}

// headBytes is how much of a file -head shows.
const headBytes = 1024

// runHead is -head <file>, Hadoop's Head: the first KiB of the file. As in
// Hadoop the path is not a pattern.
func runHead(sh *shell, args []string) error {
	if _, err := newFormat(1, 1).parse(args); err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	item, _, err := sh.resolve(args[0])
	if err != nil {
		return err
	}
	if item.st, err = sh.stat(item); err != nil {
		return err
	}
	r, err := sh.openFile(item)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = sh.transfer(sh.out, io.LimitReader(r, headBytes), -1, "")
	return sh.explain(item.text, item.abs, err)
}

// runText is -text [-ignoreCrc] <src> ..., Hadoop's Display.Text: -cat,
// except that a gzip file (by its magic) is decompressed, a SequenceFile
// (by its magic) shown record by record as "key<TAB>value", and a file
// whose name ends as a codec's (.gz, .deflate, .bz2) decompressed by it.
func runText(sh *shell, args []string) error {
	return sh.eachMatch(newFormat(1, unbounded, "ignoreCrc"), args, sh.text)
}

func (sh *shell) text(item *pathData) error {
	f, err := sh.openFile(item)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(3)
	if bytes.HasPrefix(magic, seqfile.Magic) {
		return sh.explain(item.text, item.abs, sh.records(br))
	}
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		r, err = gzip.NewReader(br)
	default:
		r, err = decompressorByName(item.abs, br)
	}
	if err != nil {
		return errPath(item.text, err.Error())
	}
	_, err = sh.transfer(sh.out, r, -1, "")
	return sh.explain(item.text, item.abs, seqfile.Explain(err))
}

// records prints each record of the SequenceFile r holds, as Hadoop's
// TextRecordInputStream does.
func (sh *shell) records(r io.Reader) error {
	sr, err := seqfile.NewReader(r)
	if err != nil {
		return err
	}
	for {
		rec, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		sh.printf("%s\n", rec)
	}
}

// decompressorByName is Hadoop's CompressionCodecFactory.getCodec over the
// codecs Hadoop registers by default: the name's extension picks one, and
// a name that ends as none is read as it is. Codecs that need Hadoop's
// native code are refused, naming them.
func decompressorByName(name string, r io.Reader) (io.Reader, error) {
	switch path.Ext(name) {
	case ".gz":
		return gzip.NewReader(r)
	case ".deflate":
		return zlib.NewReader(r)
	case ".bz2":
		return bzip2.NewReader(r), nil
	case ".lz4", ".snappy", ".zst":
		return nil, fmt.Errorf("strata fs cannot decompress %s files (Hadoop's codec needs its native code): "+
			"use hadoop fs -text", path.Ext(name))
	}
	return r, nil
}
