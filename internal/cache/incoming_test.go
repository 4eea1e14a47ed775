package cache

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// writeIncoming writes data into in's file by its path, as a writer the
// worker handed the file to does, and returns the chunk CRCs to commit.
func writeIncoming(t *testing.T, in *Incoming, data []byte) []uint32 {
	t.Helper()
	f, err := os.OpenFile(in.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var crcs []uint32
	for off := int64(0); off < int64(len(data)); off += in.ChunkSize() {
		crcs = append(crcs, Checksum(data[off:min(off+in.ChunkSize(), int64(len(data)))]))
	}
	return crcs
}

// A block written into its file from outside is cached once committed,
// with the space it holds, and survives a restart; its last page may be
// short.
func TestIncomingCommit(t *testing.T) {
	cfg := testConfig(t, 64)
	c := mustOpen(t, cfg)
	const key, size = "7-1", 5*testPS + 100
	in, err := c.Create(key, 16*testPS)
	if err != nil {
		t.Fatal(err)
	}
	if cached(c, key, 0, size) || len(c.Missing(key, 0, size)) == 0 {
		t.Fatal("an uncommitted block is visible")
	}
	if err := in.Commit(size, writeIncoming(t, in, blockBytes(key, size))); err != nil {
		t.Fatal(err)
	}
	checkRead(t, c, key, size, 0, size+1)
	if st := c.Stats(); st.Used != size || st.Blocks != 1 || st.Pages != 6 {
		t.Fatalf("stats after the commit: %+v", st)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(in.Path, &st); err != nil || st.Size != size || st.Blocks*512 >= 16*testPS {
		t.Fatalf("the data file: %d bytes in %d sectors, %v (the allocation past the block's end must go)", st.Size, st.Blocks, err)
	}
	c.Close()
	c = mustOpen(t, cfg)
	checkRead(t, c, key, size, 0, size+1)
	// The CRCs committed are the ones reads check.
	corruptByte(t, c, key, 3*testPS+5)
	_, err = c.ReadAt(key, make([]byte, testPS), 3*testPS)
	wantErr(t, "a read of a corrupt page of a committed block", err, ErrCorrupt)
}

// An incoming block holds its space until it ends: other blocks are
// refused rather than cached over it; Abort gives the space back and
// removes the file.
func TestIncomingReservesItsSpace(t *testing.T) {
	c := mustOpen(t, testConfig(t, 20)) // high watermark: 19 pages
	in, err := c.Create("7-1", 16*testPS)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "a put over a reserved directory", c.Put("8-1", 0, blockBytes("8-1", 4*testPS)), ErrFull)
	_, err = c.Create("9-1", 4*testPS)
	wantErr(t, "a second incoming block over the reservation", err, ErrFull)
	writeIncoming(t, in, blockBytes("7-1", 3*testPS))
	in.Abort()
	if _, err := os.Stat(in.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an aborted block's file: %v", err)
	}
	mustPut(t, c, "8-1", blockBytes("8-1", 4*testPS), 0)
	if err := in.Commit(3*testPS, nil); err == nil {
		t.Fatal("a commit after the abort succeeded")
	}
}

// A commit whose CRCs do not cover the block is refused and the block
// given up; a block the cache holds already cannot be created again; a
// crash before the commit leaves a file that the next Open deletes.
func TestIncomingRefusals(t *testing.T) {
	cfg := testConfig(t, 64)
	c := mustOpen(t, cfg)
	in, err := c.Create("7-1", 8*testPS)
	if err != nil {
		t.Fatal(err)
	}
	crcs := writeIncoming(t, in, blockBytes("7-1", 2*testPS))
	wantErr(t, "a commit with a CRC short", in.Commit(2*testPS, crcs[:len(crcs)-1]), ErrInvalidRange)
	if _, err := os.Stat(in.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused block's file: %v", err)
	}
	wantErr(t, "a commit past the block's size", mustCreate(t, c, "7-2").Commit(9*testPS, make([]uint32, 9)), ErrInvalidRange)

	mustPut(t, c, "8-1", blockBytes("8-1", testPS), 0)
	_, err = c.Create("8-1", 8*testPS)
	wantErr(t, "a create of a cached block", err, ErrExists)

	crashed := mustCreate(t, c, "9-1")
	writeIncoming(t, crashed, blockBytes("9-1", 3*testPS))
	c.Close()
	c = mustOpen(t, cfg)
	if _, err := os.Stat(crashed.Path); !errors.Is(err, fs.ErrNotExist) || !cached(c, "8-1", 0, testPS) ||
		len(c.Missing("9-1", 0, testPS)) == 0 {
		t.Fatalf("after a crash before the commit: the file %v, 8.1 cached %v", err, cached(c, "8-1", 0, testPS))
	}
}

func mustCreate(t *testing.T, c *Cache, key string) *Incoming {
	t.Helper()
	in, err := c.Create(key, 8*testPS)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// A disk that cannot allocate the block's room refuses the block (ErrFull
// once nothing is left to evict, or the disk's error) and leaves no file
// and no reservation; a truncate that fails at the commit gives the block
// up.
func TestIncomingOnAFailingDisk(t *testing.T) {
	cfg, ffs := faultyConfig(t, 100)
	c := mustOpen(t, cfg)
	defer c.Close()
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		ffs.Fail(cachefs.OpWrite, ".data", -1, errno)
		_, err := c.Create("7-1", 8*testPS)
		wantErr(t, "Create on a failing disk", err, errno)
		if errno == syscall.ENOSPC {
			wantErr(t, "Create on a full disk", err, ErrFull)
		}
		ffs.Clear()
		if st := c.Stats(); st.Reserved != 0 || st.Blocks != 0 {
			t.Fatalf("after a refused Create: %+v", st)
		}
	}
	in := mustCreate(t, c, "7-2")
	crcs := writeIncoming(t, in, blockBytes("7-2", 2*testPS))
	ffs.Fail(cachefs.OpWrite, ".data", 1, syscall.EIO)
	wantErr(t, "a commit whose truncate fails", in.Commit(2*testPS, crcs), syscall.EIO)
	if _, err := os.Stat(in.Path); !errors.Is(err, fs.ErrNotExist) || len(c.Missing("7-2", 0, testPS)) == 0 {
		t.Fatalf("a block whose commit failed: its file %v, cached %v", err, cached(c, "7-2", 0, testPS))
	}
	if st := c.Stats(); st.Reserved != 0 {
		t.Fatalf("%d bytes still reserved", st.Reserved)
	}
}
