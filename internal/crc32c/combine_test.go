package crc32c

import (
	"hash/crc32"
	"testing"
)

// Combine of the CRCs of the two parts of a buffer, cut anywhere, is the
// CRC of the whole.
func TestCombine(t *testing.T) {
	data := randomBytes(3, 70<<10)
	for _, cut := range []int{0, 1, 7, 4096, 64 << 10, len(data) - 1, len(data)} {
		a, b := data[:cut], data[cut:]
		got := Combine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b)))
		if want := crc32.Checksum(data, castagnoli); got != want {
			t.Fatalf("cut at %d: Combine gave %#x, want %#x", cut, got, want)
		}
	}
}

// A Combiner made once combines every part of its length.
func TestCombiner(t *testing.T) {
	const part = 64 << 10
	data := randomBytes(4, 16*part+100)
	k := CombinerFor(part)
	crc := crc32.Checksum(data[:part], castagnoli)
	for off := part; off+part <= len(data); off += part {
		crc = k.Combine(crc, crc32.Checksum(data[off:off+part], castagnoli))
		if want := crc32.Checksum(data[:off+part], castagnoli); crc != want {
			t.Fatalf("after %d bytes: %#x, want %#x", off+part, crc, want)
		}
	}
}
