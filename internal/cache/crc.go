package cache

import (
	"fmt"

	"github.com/stratafs/strata/internal/crc32c"
)

// CRC returns the CRC32C of the first length bytes of block key, which must
// be the whole block, combined from the CRCs of its cached chunks: no byte
// is read, so a whole block's checksum costs one multiplication in GF(2)
// per chunk. Every page of the range must be cached (ErrMiss otherwise),
// and the range must end where the block does or at a page's end
// (ErrInvalidRange: the CRCs of a chunk the range cuts say nothing of its
// part).
//
// NB: the CRCs are those the bytes had when they were fetched or written,
// which is what the block holds: a page whose copy on disk went bad since
// still has its CRC right, and the next read drops it.
func (c *Cache) CRC(key string, length int64) (uint32, error) {
	if err := validateKey(key); err != nil {
		return 0, err
	}
	if err := checkRange(0, length); err != nil {
		return 0, err
	}
	v, err := c.lookup(key, 0, length)
	if err != nil {
		return 0, err
	}
	var crc uint32
	var covered int64
	whole := crc32c.CombinerFor(v.chunk)
	for _, s := range v.spans {
		for j, chunkCRC := range s.crcs {
			k := whole
			if n := min(v.chunk, s.n-int64(j)*v.chunk); n != v.chunk {
				k = crc32c.CombinerFor(n)
			}
			crc = k.Combine(crc, chunkCRC)
		}
		covered += s.n
	}
	if v.eof || covered != length {
		return 0, fmt.Errorf("%w: the CRC of %d bytes of %s, whose cached pages cover %d", ErrInvalidRange, length, key, covered)
	}
	return crc, nil
}
