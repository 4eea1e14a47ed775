package seqfile

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each testdata/*.seq was written by Hadoop 3.4.2's SequenceFile.Writer
// (uncompressed, record- and block-compressed with DefaultCodec and
// BZip2Codec; Text, the numeric Writables, BooleanWritable, BytesWritable,
// NullWritable), and its .txt is what `hadoop fs -text` printed for it.
func TestRecordsAsHadoopPrintsThem(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.seq")
	if len(files) == 0 {
		t.Fatal("no testdata/*.seq")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, ".seq") + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var got bytes.Buffer
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			got.WriteString(rec + "\n")
		}
		if !bytes.Equal(got.Bytes(), want) {
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%s: line %d is %q, Hadoop's %q", f, i+1, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: %d lines, Hadoop's %d", f, len(gl), len(wl))
		}
	}
}

// A truncated or corrupt file is an error, never a panic or a silent end.
func TestDamagedFilesAreErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/block.seq")
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{2, 10, 60, 200, len(data) / 2, len(data) - 1} {
		r, err := NewReader(bytes.NewReader(data[:cut]))
		if err != nil {
			continue
		}
		for {
			if _, err = r.Next(); err != nil {
				break
			}
		}
		if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: a clean end", cut)
		}
	}
	if _, err := NewReader(strings.NewReader("SEQ\x05")); err == nil || !strings.Contains(err.Error(), "version 5") {
		t.Fatalf("version 5: %v", err)
	}
	hdr := "SEQ\x06\x23org.apache.hadoop.io.ObjectWritable\x19org.apache.hadoop.io.Text"
	if _, err := NewReader(strings.NewReader(hdr)); err == nil || !strings.Contains(err.Error(), "ObjectWritable") {
		t.Fatalf("an unknown class: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	for _, name := range []string{"plain", "record", "block", "misc"} {
		data, err := os.ReadFile("testdata/" + name + ".seq")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for range 10_000 {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

func TestJavaDouble(t *testing.T) {
	for _, c := range []struct {
		f    float64
		bits int
		want string
	}{{1, 64, "1.0"}, {100, 64, "100.0"}, {0.001, 64, "0.001"}, {1e7, 64, "1.0E7"}, {1e-4, 64, "1.0E-4"},
		{123456.789, 64, "123456.789"}, {-2.5e-9, 64, "-2.5E-9"}, {math.MaxFloat64, 64, "1.7976931348623157E308"},
		{1.0 / 3, 64, "0.3333333333333333"}, {float64(float32(0.1)), 32, "0.1"}, {math.Inf(-1), 64, "-Infinity"}} {
		if got := JavaDouble(c.f, c.bits); got != c.want {
			t.Errorf("JavaDouble(%v, %d) = %s, want %s", c.f, c.bits, got, c.want)
		}
	}
}
