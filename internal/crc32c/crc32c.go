// Package crc32c copies bytes and computes their CRC32C (Castagnoli) in one
// pass: each word is loaded once, stored to the destination and fed to the
// CRC, so that a reader that must check what it copies reads its source
// once instead of twice. It is not a general CRC library: the checksum it
// returns is exactly hash/crc32's with the Castagnoli table, which is what
// to use when nothing is to be copied.
package crc32c

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Copy copies min(len(dst), len(src)) bytes from src to dst, as the
// built-in copy does, and returns crc updated with the bytes copied: the
// value crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), src[:n])
// would return. The two slices must not overlap.
func Copy(dst, src []byte, crc uint32) uint32 {
	n := min(len(dst), len(src))
	if n == 0 {
		return crc
	}
	return copyUpdate(dst[:n], src[:n], crc)
}

// copyGeneric is Copy in two passes, where there is no one-pass code.
func copyGeneric(dst, src []byte, crc uint32) uint32 {
	copy(dst, src)
	return crc32.Update(crc, castagnoli, dst)
}

// Update returns crc updated with p: what crc32.Update(crc,
// crc32.MakeTable(crc32.Castagnoli), p) returns, for bytes that are only
// to be checked, not copied. On amd64 long inputs go through Copy into a
// scratch buffer in the CPU's cache: from a source in memory Copy's long
// streams (or 64-byte loads, where it folds) keep enough cache lines in
// flight, where hash/crc32's interleaved short ones do not (a 4 KiB read
// checks the 60 KiB of its 64 KiB chunk around it so:
// BenchmarkLeaseRandom4KiB in internal/client).
func Update(crc uint32, p []byte) uint32 { return update(crc, p) }
