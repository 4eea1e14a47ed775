package cache

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// chunkConfig is one directory of pages of 4 chunks of 4 KiB.
func chunkConfig(t *testing.T) Config {
	return Config{Dirs: []Dir{{Path: t.TempDir(), Capacity: 100 * 4 * testPS}}, PageSize: 4 * testPS,
		ChunkSize: testPS, NoSync: true}
}

// A read checks the chunks it touches, not the whole page: a corrupt chunk
// fails every read that touches it (and drops its page), never one that
// does not.
func TestCorruptChunk(t *testing.T) {
	cfg := chunkConfig(t)
	c := mustOpen(t, cfg)
	defer c.Close()
	const ps, size = 4 * testPS, 3*4*testPS - 100
	putPages(t, c, "b", size, 0, 3)
	corruptByte(t, c, "b", ps+2*testPS+7) // page 1, chunk 2

	checkRead(t, c, "b", size, ps, 2*testPS)       // chunks 0-1 of page 1
	checkRead(t, c, "b", size, ps+3*testPS+5, 100) // inside chunk 3
	checkRead(t, c, "b", size, ps-10, testPS+10)   // across pages, chunks 3 and 4
	_, err := c.ReadAt("b", make([]byte, 8), ps+2*testPS+4000)
	wantErr(t, "a read inside the corrupt chunk", err, ErrCorrupt)
	if got, want := c.Missing("b", 0, size), []Range{{ps, ps}}; !slices.Equal(got, want) {
		t.Fatalf("Missing after the corruption = %v, want %v", got, want)
	}
	putPages(t, c, "b", size, 0, 3)
	checkRead(t, c, "b", size, 0, size)
}

// A handle carries a CRC per chunk, and the pages' CRCs combined from
// them; a short-circuit reader finds a corrupt chunk by its own CRC.
func TestHandleChunks(t *testing.T) {
	c := mustOpen(t, chunkConfig(t))
	defer c.Close()
	const ps, size = 4 * testPS, 2*4*testPS - 100
	putPages(t, c, "b", size, 0, 2)
	h, err := c.Acquire("b", 10, size-10)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	data := blockBytes("b", size)
	if h.ChunkSize != testPS || h.FirstPage != 0 || h.Length != size || len(h.CRCs) != 8 {
		t.Fatalf("handle %+v", h)
	}
	for i := range h.CRCs {
		off, n := h.ChunkSpan(i)
		if got, err := h.ReadChunk(i, nil); err != nil || string(got) != string(data[off:off+n]) {
			t.Fatalf("ReadChunk(%d): %v", i, err)
		}
	}
	if got, want := h.PageCRCs(), []uint32{Checksum(data[:ps]), Checksum(data[ps:])}; !slices.Equal(got, want) {
		t.Fatalf("PageCRCs = %x, want %x", got, want)
	}
	corruptByte(t, c, "b", ps+testPS)
	_, err = h.ReadChunk(5, nil)
	wantErr(t, "ReadChunk of the corrupt chunk", err, ErrCorrupt)
	if _, err := h.ReadChunk(4, nil); err != nil {
		t.Fatalf("the chunk before it: %v", err)
	}
}

// A block keeps the chunk size it was cached with when the configuration
// changes; new blocks take the new one.
func TestChunkSizeIsPerBlock(t *testing.T) {
	cfg := chunkConfig(t)
	c := mustOpen(t, cfg)
	putPages(t, c, "old", 8*testPS, 0, 1)
	c.Close()
	cfg.ChunkSize = 0 // the default: the page (16 KiB), smaller than 64 KiB
	c = mustOpen(t, cfg)
	defer c.Close()
	putPages(t, c, "old", 8*testPS, 1, 2)
	putPages(t, c, "new", 8*testPS, 0, 2)
	for key, want := range map[string]int64{"old": testPS, "new": 4 * testPS} {
		checkRead(t, c, key, 8*testPS, 0, 8*testPS)
		h, err := c.Acquire(key, 0, 8*testPS)
		if err != nil {
			t.Fatal(err)
		}
		if h.ChunkSize != want || int64(len(h.CRCs)) != 8*testPS/want {
			t.Fatalf("%s: chunk %d with %d CRCs, want chunks of %d", key, h.ChunkSize, len(h.CRCs), want)
		}
		h.Release()
	}
}

// appendV1Header and appendV1Record write the sidecar format of version 1
// (one CRC per page), as the code before version 2 did.
func appendV1Header(dst []byte, key string, pageSize, created int64) []byte {
	start := len(dst)
	dst = append(dst, metaMagic...)
	dst = binary.LittleEndian.AppendUint16(dst, 1)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(key)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(pageSize))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(created))
	dst = append(dst, key...)
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:]))
}

func appendV1Record(dst []byte, idx, n, crc uint32) []byte {
	start := len(dst)
	dst = append(dst, recPresent, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, idx)
	dst = binary.LittleEndian.AppendUint32(dst, n)
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:]))
}

// A cache of version 1 (a CRC per page) opens as it was: its pages are
// read and checked by page, a corrupt one is still found, and pages added
// to its blocks go on being recorded so that a restart finds them all.
func TestVersion1Sidecar(t *testing.T) {
	cfg := chunkConfig(t)
	const ps, size = 4 * testPS, 3 * 4 * testPS
	data := blockBytes("b", size)
	base := blockBase(filepath.Join(cfg.Dirs[0].Path, formatDir), "b", 7)
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	meta := appendV1Header(nil, "b", ps, 1)
	meta = appendV1Record(meta, 0, ps, Checksum(data[:ps]))
	meta = appendV1Record(meta, 1, ps, Checksum(data[ps:2*ps]))
	if err := os.WriteFile(base+".meta", meta, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".data", data[:2*ps], 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustOpen(t, cfg)
	checkRead(t, c, "b", size, 0, 2*ps)
	putPages(t, c, "b", size, 2, 3)
	c.Close()
	c = mustOpen(t, cfg)
	defer c.Close()
	checkRead(t, c, "b", size, 0, size)
	h, err := c.Acquire("b", 0, size)
	if err != nil {
		t.Fatal(err)
	}
	if h.ChunkSize != ps || len(h.CRCs) != 3 {
		t.Fatalf("a version 1 block lent with chunks of %d, %d CRCs", h.ChunkSize, len(h.CRCs))
	}
	h.Release()
	corruptByte(t, c, "b", ps+3*testPS) // the last 4 KiB of page 1
	_, err = c.ReadAt("b", make([]byte, 8), ps)
	wantErr(t, "a small read of a corrupt version 1 page", err, ErrCorrupt)
}
