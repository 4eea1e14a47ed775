package cache

import (
	"hash/crc32"
	"strconv"
	"testing"
)

// The CRC of a whole cached block, combined from its chunks' CRCs, is the
// CRC32C of its bytes, for blocks ending anywhere in a page or a chunk, with
// one chunk per page and several, and again after a restart (from the
// sidecars).
func TestCRCOfAWholeBlockIsItsBytesCRC(t *testing.T) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	sizes := []int64{1, 4095, 4096, 4097, 3*testPS + 1, 8*testPS - 1, 8 * testPS, 8*testPS + 5000}
	for _, chunk := range []int64{4096, 2 * testPS} {
		cfg := testConfig(t, 1000)
		cfg.PageSize, cfg.ChunkSize = 2*testPS, chunk
		c := mustOpen(t, cfg)
		for _, size := range sizes {
			key := blockKey(size)
			mustPut(t, c, key, blockBytes(key, size), 0)
			got, err := c.CRC(key, size)
			if want := crc32.Checksum(blockBytes(key, size), castagnoli); err != nil || got != want {
				t.Fatalf("chunk %d, CRC(%d bytes) = %08x, %v; want %08x", chunk, size, got, err, want)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		c = mustOpen(t, cfg)
		for _, size := range sizes {
			key := blockKey(size)
			got, err := c.CRC(key, size)
			if want := crc32.Checksum(blockBytes(key, size), castagnoli); err != nil || got != want {
				t.Fatalf("after a restart, chunk %d, CRC(%d bytes) = %08x, %v; want %08x", chunk, size, got, err, want)
			}
		}
		_ = c.Close()
	}
}

func blockKey(size int64) string { return "crc-" + strconv.FormatInt(size, 10) }

// A block with a page missing is a miss; a range that cuts a page, or runs
// past the block's end, is refused rather than answered with chunks that
// cover other bytes.
func TestCRCNeedsEveryPageAndTheWholeBlock(t *testing.T) {
	c := mustOpen(t, testConfig(t, 100))
	defer c.Close()
	const size = 5*testPS + 100
	putPages(t, c, "gap", size, 0, 2)
	putPages(t, c, "gap", size, 3, 6)
	wantErr(t, "a block with page 2 missing", func() error { _, err := c.CRC("gap", size); return err }(), ErrMiss)
	wantErr(t, "an absent block", func() error { _, err := c.CRC("absent", 10); return err }(), ErrMiss)
	putPages(t, c, "gap", size, 2, 3)
	wantErr(t, "a range cutting a page", func() error { _, err := c.CRC("gap", 3*testPS+1); return err }(), ErrInvalidRange)
	wantErr(t, "a range past the end", func() error { _, err := c.CRC("gap", size+1); return err }(), ErrInvalidRange)
	wantErr(t, "an empty range", func() error { _, err := c.CRC("gap", 0); return err }(), ErrInvalidRange)
	if _, err := c.CRC("gap", 3*testPS); err != nil {
		t.Fatalf("a range ending at a page's end: %v", err)
	}
}
