package fsimage_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/stratafs/strata/internal/fsimage"
)

const (
	realImage = "testdata/fsimage"
	realText  = "testdata/fsimage.txt"
)

// walk reads every entry of src that the root reaches, by path.
func walk(t testing.TB, src fsimage.Source) (map[string]fsimage.Entry, error) {
	t.Helper()
	byID := map[uint64]fsimage.Entry{}
	err := src.Entries(func(e *fsimage.Entry) error {
		c := *e
		c.Name = []byte(string(e.Name))
		c.Target = nil
		byID[e.ID] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	parent := map[uint64]uint64{}
	err = src.Children(func(p uint64, kids []uint64) error {
		for _, k := range kids {
			parent[k] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string]fsimage.Entry{}
	for id, e := range byID {
		var names []string
		x := id
		for x != src.Root() {
			p, ok := parent[x]
			if !ok {
				break // seen by snapshots only
			}
			names = append([]string{string(byID[x].Name)}, names...)
			x = p
		}
		if x == src.Root() {
			out["/"+strings.Join(names, "/")] = e
		}
	}
	return out, nil
}

// TestRealImage reads the image a NameNode saved and the text `hdfs oiv -p
// Delimited` wrote of it, and finds the same entries in both.
func TestRealImage(t *testing.T) {
	im, err := fsimage.Open(realImage)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	if info := im.Info(); info.LayoutVersion != -67 || info.Inodes != 3146 || info.Codec != "" {
		t.Errorf("info %+v", info)
	}
	if err := fsimage.CheckDigest(realImage, fsimage.DigestPath(realImage), nil); err != nil {
		t.Fatal(err)
	}
	bin, err := walk(t, im)
	if err != nil {
		t.Fatal(err)
	}
	txt, err := fsimage.OpenDelimited(realText, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := walk(t, txt)
	if err != nil {
		t.Fatal(err)
	}
	if len(bin) != 3146 || len(text) != len(bin) {
		t.Fatalf("%d entries in the image, %d in the text", len(bin), len(text))
	}
	for p, b := range bin {
		x, ok := text[p]
		if !ok {
			t.Errorf("%s: not in the text", p)
			continue
		}
		minute := func(ms int64) int64 { return ms / 60_000 }
		if b.Type != x.Type || b.Perm != x.Perm || b.User != x.User || b.Group != x.Group || b.Length != x.Length ||
			b.Blocks != x.Blocks || b.Replication != x.Replication || b.BlockSize != x.BlockSize ||
			b.NSQuota != x.NSQuota || b.DSQuota != x.DSQuota || minute(b.Mtime) != minute(x.Mtime) ||
			minute(b.Atime) != minute(x.Atime) {
			t.Errorf("%s:\nimage %+v\ntext  %+v", p, b, x)
		}
	}
	for p, want := range map[string]fsimage.Type{"/empty/dir": fsimage.Dir, "/empty/file": fsimage.File, "/links/to-readme": fsimage.Symlink} {
		if bin[p].Type != want {
			t.Errorf("%s: %v, want %v", p, bin[p].Type, want)
		}
	}
	if q := bin["/quota"]; q.NSQuota != 100_000 || q.DSQuota != 1<<40 {
		t.Errorf("/quota's quotas %d %d", q.NSQuota, q.DSQuota)
	}
}

// TestTruncated: an image cut short anywhere is refused at Open, by the
// summary that no longer ends it.
func TestTruncated(t *testing.T) {
	b, err := os.ReadFile(realImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 8, 100, len(b) / 2, len(b) - 200, len(b) - 5, len(b) - 1} {
		_, err := openBytes(t, b[:n])
		var fe *fsimage.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, fsimage.ErrCorrupt) {
			t.Errorf("cut at %d: %v, want a FormatError", n, err)
		}
	}
}

// TestFlippedByte flips a byte in each section of the image: the digest
// always tells, and the reader, where the damage breaks the format, names
// the section and offset.
func TestFlippedByte(t *testing.T) {
	b, err := os.ReadFile(realImage)
	if err != nil {
		t.Fatal(err)
	}
	im, err := fsimage.Open(realImage)
	if err != nil {
		t.Fatal(err)
	}
	sections := im.Info().Sections
	im.Close()
	caught := map[string]int{}
	for _, s := range sections {
		if s.Length == 0 {
			continue
		}
		for _, at := range []int64{s.Offset, s.Offset + s.Length/3, s.Offset + s.Length - 1} {
			c := append([]byte(nil), b...)
			c[at] ^= 0x41
			path := write(t, c)
			if err := fsimage.CheckDigest(path, fsimage.DigestPath(realImage), nil); !errors.Is(err, fsimage.ErrDigest) {
				t.Errorf("%s, offset %d: the digest passed: %v", s.Name, at, err)
			}
			if err := readAll(path); err != nil {
				var fe *fsimage.FormatError
				if !errors.As(err, &fe) {
					t.Errorf("%s, offset %d: %v, not a FormatError", s.Name, at, err)
				}
				caught[s.Name]++
			}
		}
	}
	t.Logf("flips the format caught (the rest, only the digest): %v", caught)
	for _, name := range []string{"INODE", "INODE_DIR", "STRING_TABLE"} {
		if caught[name] == 0 {
			t.Errorf("no flip in %s broke its format", name)
		}
	}
}

func write(t testing.TB, b []byte) string {
	path := filepath.Join(t.TempDir(), "fsimage")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func openBytes(t testing.TB, b []byte) (*fsimage.Image, error) {
	im, err := fsimage.Open(write(t, b))
	if err == nil {
		t.Cleanup(func() { im.Close() })
	}
	return im, err
}

// readAll opens the image at path and runs its three passes.
func readAll(path string) error {
	im, err := fsimage.Open(path)
	if err != nil {
		return err
	}
	defer im.Close()
	if err := im.IDs(func(uint64, fsimage.Type) error { return nil }); err != nil {
		return err
	}
	if err := im.Children(func(uint64, []uint64) error { return nil }); err != nil {
		return err
	}
	return im.Entries(func(*fsimage.Entry) error { return nil })
}

// FuzzOpen: no input makes the reader panic or run away.
func FuzzOpen(f *testing.F) {
	// The real image is too large for the fuzzer to mutate usefully: the
	// tiny ones stand for it.
	f.Add(tinyImage(false))
	f.Add(tinyImage(true))
	f.Add([]byte("HDFSIMG1\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "fsimage")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_ = readAll(path)
	})
}

// tinyImage builds an image of a root, a directory and a file in it, with
// the sections compressed by zlib if compress is set: the format as Hadoop
// writes it, small enough for the fuzzer to work on.
func tinyImage(compress bool) []byte {
	perm := func(user, group, mode uint64) uint64 { return user<<40 | group<<16 | mode }
	msg := func(fields ...func([]byte) []byte) []byte {
		var b []byte
		for _, f := range fields {
			b = f(b)
		}
		return b
	}
	varint := func(n protowire.Number, v uint64) func([]byte) []byte {
		return func(b []byte) []byte {
			return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
		}
	}
	fixed := func(n protowire.Number, v uint64) func([]byte) []byte {
		return func(b []byte) []byte {
			return protowire.AppendFixed64(protowire.AppendTag(b, n, protowire.Fixed64Type), v)
		}
	}
	bytesF := func(n protowire.Number, v []byte) func([]byte) []byte {
		return func(b []byte) []byte { return protowire.AppendBytes(protowire.AppendTag(b, n, protowire.BytesType), v) }
	}
	delimited := func(msgs ...[]byte) []byte {
		var b []byte
		for _, m := range msgs {
			b = protowire.AppendBytes(b, m)
		}
		if compress {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write(b)
			w.Close()
			return z.Bytes()
		}
		return b
	}
	dir := func(mode uint64) []byte { return msg(varint(1, 1700000000000), fixed(4, perm(1, 2, mode))) }
	sections := []struct {
		name string
		body []byte
	}{
		{"INODE", delimited(msg(varint(1, 16387), varint(2, 3)),
			msg(varint(1, 2), varint(2, 16385), bytesF(5, dir(0o755))),
			msg(varint(1, 2), varint(2, 16386), bytesF(3, []byte("d")), bytesF(5, dir(0o1777))),
			msg(varint(1, 1), varint(2, 16387), bytesF(3, []byte("f")), bytesF(4, msg(varint(1, 3), varint(2, 1700000000001),
				varint(4, 1<<20), fixed(5, perm(2, 1, 0o644)), bytesF(6, msg(varint(1, 1), varint(3, 5))))))),
		},
		{"INODE_DIR", delimited(msg(varint(1, 16385), bytesF(2, protowire.AppendVarint(nil, 16386))),
			msg(varint(1, 16386), varint(2, 16387)))},
		{"STRING_TABLE", delimited(msg(varint(1, 4), varint(2, 3)),
			msg(varint(1, 1|1<<29), bytesF(2, []byte("alice"))), msg(varint(1, 2|2<<29), bytesF(2, []byte("etl"))),
			msg(varint(1, 2|1<<29), bytesF(2, []byte("bob"))), msg(varint(1, 1|2<<29), bytesF(2, []byte("hive"))))},
	}
	out := []byte("HDFSIMG1")
	summary := msg(varint(1, 1), varint(2, uint64(uint32(0xffffffbd))))
	if compress {
		summary = bytesF(3, []byte("org.apache.hadoop.io.compress.DefaultCodec"))(summary)
	}
	for _, s := range sections {
		summary = bytesF(4, msg(bytesF(1, []byte(s.name)), varint(2, uint64(len(s.body))), varint(3, uint64(len(out)))))(summary)
		out = append(out, s.body...)
	}
	d := protowire.AppendBytes(nil, summary)
	out = append(out, d...)
	return binary.BigEndian.AppendUint32(out, uint32(len(d)))
}

func TestTinyImage(t *testing.T) {
	for _, compress := range []bool{false, true} {
		im, err := openBytes(t, tinyImage(compress))
		if err != nil {
			t.Fatal(err)
		}
		got, err := walk(t, im)
		if err != nil {
			t.Fatal(err)
		}
		d, f := got["/d"], got["/d/f"]
		if len(got) != 3 || d.Perm != 0o1777 || d.User != "alice" || d.Group != "etl" ||
			f.Length != 5 || f.Blocks != 1 || f.Replication != 3 || f.User != "bob" || f.Group != "hive" || f.Perm != 0o644 {
			t.Errorf("compressed %v: %+v", compress, got)
		}
	}
}
