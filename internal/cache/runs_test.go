package cache

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/cache/cachefs"
)

// writeLog is a file system that records the writes to data files, as
// [offset, end) ranges.
type writeLog struct {
	cachefs.FS
	mu     sync.Mutex
	writes [][2]int64
}

func (w *writeLog) OpenFile(name string, flag int, perm os.FileMode) (cachefs.File, error) {
	f, err := w.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".data") {
		return f, err
	}
	return &loggedFile{File: f, log: w}, nil
}

func (w *writeLog) take() [][2]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.writes
	w.writes = nil
	return out
}

type loggedFile struct {
	cachefs.File
	log *writeLog
}

func (f *loggedFile) WriteAt(p []byte, off int64) (int, error) {
	f.log.mu.Lock()
	f.log.writes = append(f.log.writes, [2]int64{off, off + int64(len(p))})
	f.log.mu.Unlock()
	return f.File.WriteAt(p, off)
}

// A Put writes each run of consecutive new pages in one call (the page
// cache then holds it in folios as large as the run allows), skipping the
// pages cached already, and the pages read back right.
func TestPutWritesRunsWhole(t *testing.T) {
	log := &writeLog{FS: cachefs.OS()}
	cfg := testConfig(t, 64)
	cfg.FS = log
	c := mustOpen(t, cfg)
	defer c.Close()
	const size = 20*testPS + 100
	putPages(t, c, "k", size, 3, 5)
	putPages(t, c, "k", size, 9, 10)
	log.take()
	putPages(t, c, "k", size, 0, 21)
	want := [][2]int64{{0, 3 * testPS}, {5 * testPS, 9 * testPS}, {10 * testPS, size}}
	if got := log.take(); !slices.Equal(got, want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	checkRead(t, c, "k", size, 0, size)
}
