package crc32c

import "hash/crc32"

// Polynomial arithmetic modulo the Castagnoli polynomial, bit-reversed as
// hash/crc32 keeps its CRCs: the top bit of a uint32 is x^0. This is zlib's
// crc32_combine algebra (crc32.c: multmodp, x2nmodp).

// multModP returns a*b modulo the polynomial.
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.Castagnoli
		} else {
			b >>= 1
		}
	}
	return p
}

// xPow2N[i] is x^(2^i) modulo the polynomial; x^(2^32) = x^(2^0) there
// (the multiplicative group's order divides 2^32-1).
var xPow2N = func() (t [32]uint32) {
	t[0] = 1 << 30 // x^1
	for i := 1; i < len(t); i++ {
		t[i] = multModP(t[i-1], t[i-1])
	}
	return t
}()

// xPow8N returns x^(8n) modulo the polynomial: multiplying a CRC (without
// inversions) by it gives the CRC of n more zero bytes.
func xPow8N(n int) uint32 { return xPowN(8 * n) }

// xPowN returns x^n modulo the polynomial.
func xPowN(n int) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 0; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multModP(xPow2N[k%32], p)
		}
	}
	return p
}

// shiftTable is the CRC of k zero bytes from every 32-bit value, a byte of
// it at a time: t[b][i] = CRC(i << 8b, k zeros).
type shiftTable [4][256]uint32

func makeShiftTable(k int) *shiftTable {
	x := xPow8N(k)
	t := new(shiftTable)
	for b := range 4 {
		for i := range 256 {
			t[b][i] = multModP(x, uint32(i)<<(8*b))
		}
	}
	return t
}

func (t *shiftTable) shift(crc uint32) uint32 {
	return t[3][crc>>24] ^ t[2][crc>>16&0xff] ^ t[1][crc>>8&0xff] ^ t[0][crc&0xff]
}
