package crc32c

import (
	"hash/crc32"
	"testing"
)

// Multiplying by xPow8N(n) is the CRC of n more zero bytes, for lengths
// with one bit set and many; the tables are the same shift a byte at a
// time.
func TestShiftIsCRCOfZeros(t *testing.T) {
	zeros := make([]byte, 1<<20)
	for _, n := range []int{0, 1, 2, 3, 7, 8, 64, 192, 1344, 4096, 12345, 349504, 1 << 20} {
		for _, crc := range []uint32{1, 0x80000000, 0xdeadbeef, 0xffffffff} {
			want := ^crc32.Update(^crc, castagnoli, zeros[:n])
			if got := multModP(xPow8N(n), crc); got != want {
				t.Fatalf("shift of %#x by %d zero bytes: %#x, want %#x", crc, n, got, want)
			}
			if got := shiftBy(n); multModP(got, crc) != want {
				t.Fatalf("cached shift by %d zero bytes is wrong", n)
			}
		}
	}
	for _, tc := range []struct {
		k int
		t *shiftTable
	}{{k1, table1}, {k2, table2}} {
		for _, crc := range []uint32{1, 0xdeadbeef, 0x12345678} {
			if got, want := tc.t.shift(crc), ^crc32.Update(^crc, castagnoli, zeros[:tc.k]); got != want {
				t.Fatalf("table shift of %#x by %d: %#x, want %#x", crc, tc.k, got, want)
			}
		}
	}
}
