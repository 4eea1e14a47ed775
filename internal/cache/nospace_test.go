package cache

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

func faultyConfig(t *testing.T, capacityPages int64) (Config, *cachefs.Faulty) {
	cfg := testConfig(t, capacityPages)
	ffs := cachefs.NewFaulty(cachefs.OS())
	cfg.FS = ffs
	return cfg, ffs
}

// The disk is shared: it fills up long before the cache reaches its
// capacity. Puts must evict and retry, not fail.
func TestNoSpaceEvictsAndRetries(t *testing.T) {
	cfg, ffs := faultyConfig(t, 1000)
	c := mustOpen(t, cfg)
	defer c.Close()
	ffs.LimitSpace(40 * testPS) // sidecars take space too
	const size = 3*testPS + 5
	for i := range 100 {
		putPages(t, c, fmt.Sprintf("k%03d", i), size, 0, 4)
	}
	s := c.Stats()
	if ffs.Fired() == 0 || s.Evictions == 0 {
		t.Fatalf("no ENOSPC or no eviction: fired %d, stats %+v", ffs.Fired(), s)
	}
	if s.Used > 40*testPS || ffs.Used() > 40*testPS {
		t.Fatalf("used %d, disk %d, over the disk's %d", s.Used, ffs.Used(), 40*testPS)
	}
	for i := range 100 {
		key := fmt.Sprintf("k%03d", i)
		if cached(c, key, 0, size) {
			checkRead(t, c, key, size, 0, size)
		}
	}
	checkRead(t, c, "k099", size, 0, size)
}

func TestNoSpaceWithNothingToEvictIsFull(t *testing.T) {
	cfg, ffs := faultyConfig(t, 100)
	c := mustOpen(t, cfg)
	defer c.Close()
	ffs.Fail(cachefs.OpWrite, ".data", -1, syscall.ENOSPC)
	err := c.Put("k", 0, make([]byte, testPS))
	wantErr(t, "Put on a full disk", err, ErrFull)
	wantErr(t, "Put on a full disk", err, syscall.ENOSPC)
	if s := c.Stats(); s.Blocks != 0 || s.Used != 0 {
		t.Fatalf("a failed Put left %+v", s)
	}
	ffs.Clear()
	putPages(t, c, "k", testPS, 0, 1)
	checkRead(t, c, "k", testPS, 0, testPS)
}

func TestNoSpaceAtEveryStep(t *testing.T) {
	for _, f := range []struct {
		op     cachefs.Op
		substr string
	}{
		{cachefs.OpOpen, ".data"},  // creating the data file
		{cachefs.OpMkdir, ""},      // its subdirectory
		{cachefs.OpWrite, ".data"}, // a page
		{cachefs.OpWrite, ".meta"}, // the sidecar
		{cachefs.OpOpen, ".meta"},  // creating the sidecar
	} {
		t.Run(fmt.Sprintf("%s %s", f.op, f.substr), func(t *testing.T) {
			cfg, ffs := faultyConfig(t, 100)
			c := mustOpen(t, cfg)
			for i := range 20 {
				putPages(t, c, fmt.Sprintf("k%02d", i), testPS, 0, 1)
			}
			ffs.Fail(f.op, f.substr, 2, syscall.ENOSPC)
			putPages(t, c, "new-block", 2*testPS, 0, 2) // a new subdirectory, most likely
			if ffs.Fired() != 2 || c.Stats().Evictions == 0 {
				t.Fatalf("fired %d, evictions %d", ffs.Fired(), c.Stats().Evictions)
			}
			checkRead(t, c, "new-block", 2*testPS, 0, 2*testPS)
			c.Close()
			c = mustOpen(t, Config{Dirs: cfg.Dirs, PageSize: testPS})
			defer c.Close()
			checkRead(t, c, "new-block", 2*testPS, 0, 2*testPS)
		})
	}
}

// A failure that is not for space is the caller's: the pages stay cached in
// memory, and the next Put of them records them.
func TestFailedSidecarWriteIsRecordedByTheNextPut(t *testing.T) {
	cfg, ffs := faultyConfig(t, 100)
	c := mustOpen(t, cfg)
	ffs.Fail(cachefs.OpSync, ".data", 1, syscall.EIO)
	err := c.Put("k", 0, blockBytes("k", 2*testPS))
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Put with a failing fdatasync: %v", err)
	}
	checkRead(t, c, "k", 2*testPS, 0, 2*testPS) // the pages are in the page cache
	putPages(t, c, "k", 2*testPS, 0, 2)         // nothing to write, records to append
	c.Close()
	c = mustOpen(t, Config{Dirs: cfg.Dirs, PageSize: testPS})
	defer c.Close()
	checkRead(t, c, "k", 2*testPS, 0, 2*testPS)
}

func TestReadErrorsAreNotHidden(t *testing.T) {
	cfg, ffs := faultyConfig(t, 100)
	c := mustOpen(t, cfg)
	defer c.Close()
	putPages(t, c, "k", testPS, 0, 1)
	ffs.Fail(cachefs.OpOpen, ".data", 1, syscall.EMFILE)
	_, err := c.ReadAt("k", make([]byte, 1), 0)
	wantErr(t, "ReadAt when open fails", err, syscall.EMFILE)
	// An I/O error reading a page is a bad copy: dropped, to be fetched again.
	ffs.Fail(cachefs.OpRead, ".data", 1, syscall.EIO)
	_, err = c.ReadAt("k", make([]byte, 1), 0)
	wantErr(t, "ReadAt when the read fails", err, ErrCorrupt)
}

// A capacity larger than the disk (a 64 MiB file system told 1 GiB) is
// clamped at Open to what the disk can hold, so that the watermarks evict
// before the disk fills; a disk with no room for a page is refused.
func TestCapacityClampedToTheDisk(t *testing.T) {
	cfg, ffs := faultyConfig(t, 1000)
	ffs.LimitSpace(40 * testPS)
	c := mustOpen(t, cfg)
	defer c.Close()
	if got := c.Clamped(); len(got) != 1 || got[0].Configured != 1000*testPS || got[0].Capacity != 40*testPS {
		t.Fatalf("Clamped() = %+v, want 1000 pages clamped to 40", got)
	}
	if s := c.Stats(); s.Capacity != 40*testPS {
		t.Fatalf("capacity %d, want %d", s.Capacity, 40*testPS)
	}
	// Filled many times over, the cache evicts by its watermarks: the disk
	// never says ENOSPC.
	for i := range 100 {
		putPages(t, c, fmt.Sprintf("k%03d", i), 3*testPS, 0, 3)
	}
	if ffs.Fired() != 0 || c.Stats().Evictions == 0 {
		t.Fatalf("%d ENOSPC, %d evictions: want none and some", ffs.Fired(), c.Stats().Evictions)
	}

	cfg, ffs = faultyConfig(t, 1000)
	ffs.LimitSpace(testPS / 2)
	if _, err := Open(cfg); err == nil {
		t.Fatal("Open with no room for a page succeeded")
	}
}

// The real file system: no disk here has an exabyte free.
func TestCapacityClampedToTheRealDisk(t *testing.T) {
	cfg := Config{Dirs: []Dir{{Path: t.TempDir(), Capacity: 1 << 60}}, PageSize: testPS}
	c := mustOpen(t, cfg)
	defer c.Close()
	if got := c.Clamped(); len(got) != 1 || got[0].Capacity >= 1<<60 || got[0].Capacity < testPS {
		t.Fatalf("Clamped() = %+v", got)
	}
}
