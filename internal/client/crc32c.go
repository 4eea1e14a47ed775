package client

// The CRC32C algebra that lets two cores check one page: each CRCs its
// part, and the parts' CRCs combine into the page's (zlib's
// crc32_combine, for the Castagnoli polynomial).

// castagnoliReversed is the Castagnoli polynomial, bit-reversed as the
// table-driven CRC uses it.
const castagnoliReversed = 0x82f63b78

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = mulModP(p, p)
	}
	return t
}()

// mulModP multiplies a and b modulo the polynomial (a != 0).
func mulModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; ; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReversed
		} else {
			b >>= 1
		}
	}
}

// crc32cCombine returns the CRC32C of a followed by b, of a's CRC, b's CRC
// and b's length.
func crc32cCombine(crcA, crcB uint32, lenB int64) uint32 {
	op := uint32(1) << 31 // x^0: x^(8·lenB) built from x^(2^k) for the set bits
	for k := 3; lenB != 0; k, lenB = k+1, lenB>>1 {
		if lenB&1 != 0 {
			op = mulModP(x2n[k&31], op)
		}
	}
	return mulModP(op, crcA) ^ crcB
}
