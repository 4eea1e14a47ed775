//go:build !amd64

package crc32c

import "hash/crc32"

func copyUpdate(dst, src []byte, crc uint32) uint32 { return copyGeneric(dst, src, crc) }

func update(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }
