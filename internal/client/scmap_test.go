package client

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
)

// A lease whose file was cut short reads by pread, which fails, and does
// not touch the mapping; a read of the mapping past the file's end (a cut
// racing with the read) fails with errMapFault instead of crashing.
func TestLeaseOfTruncatedFile(t *testing.T) {
	const ps = 4096
	l, block, path := testLease(t, 4*ps, ps, 0)
	if err := os.Truncate(path, 2*ps+100); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2*ps)
	if err := l.readAt(buf, 0); err != nil || !bytes.Equal(buf, block[:2*ps]) {
		t.Fatalf("read before the cut: %v", err)
	}
	if err := l.readAt(buf, 2*ps); !errors.Is(err, io.EOF) {
		t.Fatalf("read across the cut: %v, want EOF", err)
	}
	if err := l.readMapped(buf[:ps], 3*ps); !errors.Is(err, errMapFault) { // the page past the one the file ends in
		t.Fatalf("read of the mapping across the cut: %v, want errMapFault", err)
	}
	if err := l.readMapped(buf[:ps], 0); err != nil || !bytes.Equal(buf[:ps], block[:ps]) {
		t.Fatalf("read of the mapping after a fault: %v", err)
	}
}

// Closing a lease while reads of its mapping are in flight is safe: each
// read returns the block's bytes or os.ErrClosed.
func TestLeaseClosedUnderReaders(t *testing.T) {
	const ps, n = 64 << 10, 4 << 20
	l, block, _ := testLease(t, n, ps, 0)
	var wg sync.WaitGroup
	started := make(chan struct{})
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, n-i*ps)
			for j := 0; ; j++ {
				if j == 1 {
					started <- struct{}{}
				}
				err := l.readAt(buf, int64(i*ps))
				if errors.Is(err, os.ErrClosed) {
					return
				}
				if err != nil || !bytes.Equal(buf, block[i*ps:]) {
					errs <- err
					return
				}
			}
		}()
	}
	for range 4 {
		<-started
	}
	l.close()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a read racing with close: %v", err)
	}
}
