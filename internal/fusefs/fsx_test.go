package fusefs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestFSX is an fsx-style differential test (STYLE rule 9): random
// writes (in the middle, past the end, appends), truncates (cuts and
// extensions), reads, renames, fsyncs and close-reopens of one file,
// made on a file in the mount and on a local file (the model) alike;
// every read, and the whole file after every reopen, must agree. A seed
// that fails is printed, to be run again alone.
func TestFSX(t *testing.T) {
	srv := devServer(t, "--block-size", "4MiB")
	m := mount(t, srv.Addr, "default")
	model := t.TempDir()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			x := newFSX(t, seed, filepath.Join(m.Dir, fmt.Sprint(seed)), filepath.Join(model, fmt.Sprint(seed)))
			defer x.close()
			for i := range 200 {
				x.step(i)
			}
			x.reopen()
		})
	}
}

// maxFSXSize bounds the file: past 2 blocks, so that changes land in
// blocks other than the first, and small enough to rewrite often.
const maxFSXSize = 2*testBlock + 12345

type fsx struct {
	t          *testing.T
	rnd        *rand.Rand
	seed       uint64
	mnt, local string
	fm, fl     *os.File
	log        []string // the operations so far, for the failure's message
}

func newFSX(t *testing.T, seed uint64, mnt, local string) *fsx {
	x := &fsx{t: t, rnd: rand.New(rand.NewPCG(seed, 17)), seed: seed, mnt: mnt, local: local}
	x.fm, x.fl = x.open(mnt, os.O_CREATE), x.open(local, os.O_CREATE)
	return x
}

func (x *fsx) open(p string, flag int) *os.File {
	f, err := os.OpenFile(p, os.O_RDWR|flag, 0o644)
	if err != nil {
		x.fail("open %s: %v", p, err)
	}
	return f
}

func (x *fsx) fail(format string, args ...any) {
	x.t.Helper()
	x.t.Fatalf("seed %d, after %d operations (last: %v): %s", x.seed, len(x.log), x.log[max(0, len(x.log)-8):], fmt.Sprintf(format, args...))
}

func (x *fsx) size() int64 {
	fi, err := x.fl.Stat()
	if err != nil {
		x.fail("stat the model: %v", err)
	}
	return fi.Size()
}

// step makes one random operation on both files.
func (x *fsx) step(i int) {
	size := x.size()
	switch r := x.rnd.IntN(100); {
	case r < 40:
		off := x.rnd.Int64N(min(size+testBlock/2, maxFSXSize))
		n := 1 + x.rnd.Int64N(min(256<<10, maxFSXSize-off))
		data := make([]byte, n)
		newPRNG(int64(x.seed)*1000 + int64(i)).Read(data)
		x.do(fmt.Sprintf("write %d+%d", off, n), func(f *os.File) error { _, err := f.WriteAt(data, off); return err })
	case r < 55:
		n := x.rnd.Int64N(maxFSXSize)
		x.do(fmt.Sprintf("truncate %d", n), func(f *os.File) error { return f.Truncate(n) })
	case r < 80:
		x.read(x.rnd.Int64N(size+1), 1+x.rnd.Int64N(1<<20))
	case r < 88:
		x.reopen()
	case r < 94:
		x.rename()
	default:
		x.do("fsync", func(f *os.File) error { return f.Sync() })
	}
}

// do applies op to both files; both must succeed.
func (x *fsx) do(what string, op func(*os.File) error) {
	x.t.Helper()
	x.log = append(x.log, what)
	if err := op(x.fl); err != nil {
		x.fail("the model: %v", err)
	}
	if err := op(x.fm); err != nil {
		x.fail("the mount: %v", err)
	}
}

// read reads [off, off+n) of both and compares.
func (x *fsx) read(off, n int64) {
	x.t.Helper()
	x.log = append(x.log, fmt.Sprintf("read %d+%d", off, n))
	want, got := make([]byte, n), make([]byte, n)
	wn, _ := x.fl.ReadAt(want, off)
	gn, err := x.fm.ReadAt(got, off)
	if gn != wn || !bytes.Equal(got[:gn], want[:wn]) {
		x.fail("read %d+%d: %d bytes (%v), want %d; first difference at %d", off, n, gn, err, wn, firstDiff(got[:gn], want[:wn]))
	}
}

// reopen closes both (the mount commits) and compares the whole files.
func (x *fsx) reopen() {
	x.t.Helper()
	x.log = append(x.log, "close and reopen")
	if err := x.fm.Close(); err != nil {
		x.fail("close in the mount: %v", err)
	}
	x.fl.Close()
	got, err := os.ReadFile(x.mnt)
	want, _ := os.ReadFile(x.local)
	if err != nil || !bytes.Equal(got, want) {
		x.fail("after close: %d bytes (%v), want %d; first difference at %d", len(got), err, len(want), firstDiff(got, want))
	}
	x.fm, x.fl = x.open(x.mnt, 0), x.open(x.local, 0)
}

// rename moves both files to a new name, open.
func (x *fsx) rename() {
	x.t.Helper()
	x.log = append(x.log, "rename")
	nm, nl := x.mnt+"r", x.local+"r"
	if err := os.Rename(x.mnt, nm); err != nil {
		x.fail("rename in the mount: %v", err)
	}
	if err := os.Rename(x.local, nl); err != nil {
		x.fail("rename the model: %v", err)
	}
	x.mnt, x.local = nm, nl
}

func (x *fsx) close() {
	x.fm.Close()
	x.fl.Close()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
