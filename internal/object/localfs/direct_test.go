package localfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"testing/iotest"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/localfs"
	"github.com/stratafs/strata/internal/object/objtest"
)

// A large Put is written past the page cache, whole buffers by O_DIRECT and
// the tail by an ordinary write: every size around the edges reads back
// byte for byte, from a reader that hands out odd pieces, and (on Linux)
// none of the object's pages is left in memory, which says the direct path
// was taken.
func TestPutDirectByteForByte(t *testing.T) {
	s := newStore(t)
	sizes := []int{localfs.DirectMin, localfs.DirectMin + 1, localfs.DirectBuf - 4096,
		localfs.DirectBuf, localfs.DirectBuf + 4095, 3*localfs.DirectBuf + 12345}
	for i, size := range sizes {
		data := objtest.Data(uint64(i), size)
		key := "blocks/d" + string(rune('a'+i))
		if _, err := s.Put(ctx, key, iotest.HalfReader(bytes.NewReader(data)), int64(size)); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		path, err := localfs.KeyPath(s, key)
		if err != nil {
			t.Fatal(err)
		}
		if bypassesPageCache(t, s.Root()) {
			if n := residentPages(t, path, size); n > 1 {
				t.Errorf("%d bytes: %d pages of the object in the page cache, want the tail's at most", size, n)
			}
		}
		r, err := s.Get(ctx, key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back %d bytes (%v), not what was put", size, len(got), err)
		}
	}
	if left := tmpEntries(t, s); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// tmpfsMagic is statfs's type of a tmpfs (Linux's TMPFS_MAGIC).
const tmpfsMagic = 0x01021994

// bypassesPageCache reports whether O_DIRECT writes in dir leave no page
// in memory: on Linux, but for tmpfs, which takes the flag and keeps every
// page in memory all the same.
func bypassesPageCache(t *testing.T, dir string) bool {
	if runtime.GOOS != "linux" {
		return false
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Type) != tmpfsMagic
}

// residentPages counts the pages of the file's first size bytes that are in
// the page cache (mincore).
func residentPages(t *testing.T, path string, size int) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)),
		uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// failAfter hands out n bytes of r and then fails with err.
type failAfter struct {
	r   io.Reader
	n   int
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k, err := f.r.Read(p[:min(len(p), f.n)])
	f.n -= k
	return k, err
}

// A large Put that fails midway (its body fails, ends early, runs long, or
// its context ends) leaves no object and no temp file.
func TestPutDirectFailsMidwayLeavesNothing(t *testing.T) {
	size := 2*localfs.DirectBuf + 100
	data := objtest.Data(7, size)
	boom := errors.New("the body failed")
	cancelled, cancel := context.WithCancel(ctx)
	cases := []struct {
		name string
		ctx  context.Context
		r    io.Reader
		size int
		want error
	}{
		{"body fails", ctx, &failAfter{r: bytes.NewReader(data), n: localfs.DirectBuf + 5, err: boom}, size, boom},
		{"body short", ctx, bytes.NewReader(data[:size-1]), size, object.ErrSizeMismatch},
		{"body long", ctx, bytes.NewReader(append(data, 1)), size, object.ErrSizeMismatch},
		{"cancelled", cancelled, &cancelAfter{r: bytes.NewReader(data), n: localfs.DirectBuf + 5, cancel: cancel}, size, context.Canceled},
	}
	for _, c := range cases {
		s := newStore(t)
		_, err := s.Put(c.ctx, "blocks/x", c.r, int64(c.size))
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		if _, err := s.Head(ctx, "blocks/x"); !errors.Is(err, object.ErrNotFound) {
			t.Fatalf("%s: Head after the failed put: %v, want not found", c.name, err)
		}
		if left := tmpEntries(t, s); len(left) != 0 {
			t.Fatalf("%s: temp files left: %v", c.name, left)
		}
	}
}

// cancelAfter hands out n bytes of r and then cancels its context.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n == 0 {
		c.cancel()
	}
	k, err := c.r.Read(p[:min(len(p), max(c.n, 1))])
	c.n = max(c.n-k, 0)
	return k, err
}
