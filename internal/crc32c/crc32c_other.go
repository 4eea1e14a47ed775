//go:build !amd64

package crc32c

func copyUpdate(dst, src []byte, crc uint32) uint32 { return copyGeneric(dst, src, crc) }
