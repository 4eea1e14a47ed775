package crc32c

import (
	"hash/crc32"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"
)

// The CRC32 instruction takes 3 cycles and can start every cycle, so one
// chain of them uses a third of it. copyTriple runs three chains, over
// three consecutive stretches of k bytes, and their CRCs are joined by
// shifting: CRC(I, ABC) = shift(shift(CRC(I, A)) ^ CRC(0, B)) ^ CRC(0, C),
// shift being the CRC of k zero bytes (hash/crc32's crc32_amd64.go derives
// it). The CRCs here are hash/crc32's without its inversions.
//
// NB: the stretches are a third of the buffer each, not a fixed 1344 bytes
// as in hash/crc32: from a source in memory (a file's pages mapped from the
// page cache) three short stretches a few hundred bytes apart defeat the
// CPU's prefetcher, and a 1 MiB copy ran at a third of memory's speed;
// three long sequential streams run at about a pread's. Joining stretches
// of any length costs two multiplications modulo the polynomial, which
// shifts caches per length.

// farMin is the shortest copy split in thirds; shorter ones take stretches
// of fixed length whose shift is a table lookup, as in hash/crc32.
const farMin = 12 << 10

const (
	k1 = 192  // for 576 bytes and more
	k2 = 1344 // for 4032 bytes and more
)

// copyTriple copies 3*k bytes from src to dst (k a multiple of 64) and
// returns CRC(crc, src[:k]), CRC(0, src[k:2k]) and CRC(0, src[2k:3k]).
//
//go:noescape
func copyTriple(crc uint32, dst, src *byte, k int) (a, b, c uint32)

// copySingle copies n bytes from src to dst and returns CRC(crc, src[:n]).
//
//go:noescape
func copySingle(crc uint32, dst, src *byte, n int) uint32

// sse42 is whether copyUpdate copies in one pass at all; tests turn it
// off.
var sse42 = cpu.X86.HasSSE42

var table1, table2 *shiftTable

func init() {
	if sse42 {
		table1, table2 = makeShiftTable(k1), makeShiftTable(k2)
	}
}

func copyUpdate(dst, src []byte, crc uint32) uint32 {
	if !sse42 {
		return copyGeneric(dst, src, crc)
	}
	crc = ^crc
	if useFold && len(src) >= foldMin {
		n := len(src) &^ 255
		crc = copyFold(crc, &dst[0], &src[0], n, keys)
		dst, src = dst[n:], src[n:]
	}
	if len(src) >= farMin {
		k := len(src) / 3 &^ 63
		a, b, c := copyTriple(crc, &dst[0], &src[0], k)
		x := shiftBy(k)
		crc = multModP(x, multModP(x, a)^b) ^ c
		dst, src = dst[3*k:], src[3*k:]
	}
	for _, s := range []struct {
		k int
		t *shiftTable
	}{{k2, table2}, {k1, table1}} {
		for len(src) >= 3*s.k {
			a, b, c := copyTriple(crc, &dst[0], &src[0], s.k)
			crc = s.t.shift(s.t.shift(a)^b) ^ c
			dst, src = dst[3*s.k:], src[3*s.k:]
		}
	}
	if len(src) > 0 {
		crc = copySingle(crc, &dst[0], &src[0], len(src))
	}
	return ^crc
}

// shifts caches shiftBy's answers by length: a reader copies pages of one
// size over and over. An entry is the length (at most 32 bits) in the high
// half and its shift in the low one; a race leaves one or the other.
var shifts [16]atomic.Uint64

// shiftBy returns x^(8k) modulo the polynomial: multiplying a CRC by it
// gives the CRC of k more zero bytes.
func shiftBy(k int) uint32 {
	e := &shifts[k/64%len(shifts)]
	if v := e.Load(); v != 0 && int(v>>32) == k { // 0: empty (no shift is 0)
		return uint32(v)
	}
	x := xPow8N(k)
	if uint64(k) < 1<<32 {
		e.Store(uint64(k)<<32 | uint64(x))
	}
	return x
}

// scratchLen is the buffer update copies through: a 64 KiB chunk in one
// piece, inside L2, so that its stores cost little.
const scratchLen = 64 << 10

var scratch = sync.Pool{New: func() any { return new([scratchLen]byte) }}

// update is Update: by the one-pass copy into a scratch buffer where p is
// long enough for its long streams (three chains over p's thirds, or
// folding) to beat hash/crc32's, whose three chains 1,344 bytes apart
// defeat the CPU's prefetcher from a source in memory; else hash/crc32.
func update(crc uint32, p []byte) uint32 {
	if !sse42 || len(p) < farMin {
		return crc32.Update(crc, castagnoli, p)
	}
	s := scratch.Get().(*[scratchLen]byte)
	for len(p) > 0 {
		n := min(len(p), scratchLen)
		crc = copyUpdate(s[:n], p[:n], crc)
		p = p[n:]
	}
	scratch.Put(s)
	return crc
}
