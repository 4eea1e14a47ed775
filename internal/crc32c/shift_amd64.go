package crc32c

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
