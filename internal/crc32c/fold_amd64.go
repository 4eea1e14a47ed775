package crc32c

import "golang.org/x/sys/cpu"

// Where the CPU has AVX-512 and VPCLMULQDQ, long copies fold instead of
// running CRC32 chains: each 64-byte load is stored to dst and XORed into
// an accumulator that carry-less multiplications have carried forward to
// the same place in the message (Intel, "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ"). The accumulators stay congruent to the
// message modulo the polynomial, so the CRC of their last 64 bytes, by
// the CRC32 instruction, is the message's: no Barrett reduction to get
// right. The chains take 8 bytes a load, which from a source in memory
// keeps too few cache lines in flight; 64-byte loads draw on memory at its
// speed (docs/benchmarks.md).

// foldMin is the shortest copy that folds: copyFold takes 256 bytes at a
// time, and even at 256 its fixed cost (joining four accumulators, eight
// CRC32s of the last 64 bytes) is less than the chains' whole
// (BenchmarkCopy: 15-21 ns against 24-27).
const foldMin = 256

// canFold is whether the CPU (and the OS, which must save the ZMM
// registers) has what copyFold uses; useFold is whether copyUpdate folds
// (tests turn it off).
var (
	canFold = cpu.X86.HasSSE42 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ
	useFold = canFold
)

// foldKeys are the multipliers of a fold, for each 128-bit lane: the
// lane's low quadword (its first 8 bytes, the higher powers of x) is
// multiplied by the first, the high one by the second. keys[0:2] carry a
// lane 2048 bits on (four accumulators of 512 bits), keys[2:4] 512 bits.
type foldKeys [4]uint64

var keys = foldKeysFor(2048, 512)

// foldKeysFor returns the multipliers that carry a lane d1 and then d2
// bits on. Carrying lane v = lo·x^64 + hi (lo and hi as 64-bit reflected
// polynomials) d bits on is v·x^d, congruent modulo the polynomial to
// lo·(x^(d+63) mod P)·x + hi·(x^(d-1) mod P)·x; the carry-less product of
// two reflected 64-bit values is their product times x as a 128-bit
// reflected value, hence the -1s. Each multiplier (degree < 32) sits in
// the top half of its quadword, as the reflected polynomial it is.
func foldKeysFor(d1, d2 int) *foldKeys {
	k := func(n int) uint64 { return uint64(xPowN(uint64(n))) << 32 }
	return &foldKeys{k(d1 + 63), k(d1 - 1), k(d2 + 63), k(d2 - 1)}
}

// copyFold copies n bytes (a multiple of 256, at least 256) from src to
// dst and returns CRC(crc, src[:n]), without inversions.
//
//go:noescape
func copyFold(crc uint32, dst, src *byte, n int, k *foldKeys) uint32
