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
func xPow8N(n int) uint32 { return xPowN(8 * uint64(n)) }

// xPowN returns x^n modulo the polynomial.
func xPowN(n uint64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 0; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multModP(xPow2N[k%32], p)
		}
	}
	return p
}

// Combine returns the CRC32C of A followed by B, given crcA = CRC32C(A),
// crcB = CRC32C(B) and n = len(B) (zlib's crc32_combine): the CRC of a
// page from its chunks' without reading the page. The inversions of the
// CRC cancel out, as zlib's derivation shows.
func Combine(crcA, crcB uint32, n int64) uint32 { return CombinerFor(n).Combine(crcA, crcB) }

// A Combiner combines CRCs with those of parts of one length: Combine
// costs one multiplication modulo the polynomial (32 shifts), where
// finding the multiplier takes one per bit of the length.
type Combiner uint32

// CombinerFor returns the Combiner of parts B of n bytes: x^(8n) modulo the
// polynomial.
func CombinerFor(n int64) Combiner { return Combiner(xPowN(8 * uint64(n))) }

// Combine returns the CRC32C of A followed by B, given crcA = CRC32C(A) and
// crcB = CRC32C(B), B of k's length.
func (k Combiner) Combine(crcA, crcB uint32) uint32 { return multModP(uint32(k), crcA) ^ crcB }
