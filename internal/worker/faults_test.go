package worker_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cache/cachefs"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/object/faulty"
	"github.com/stratafs/strata/internal/object/retry"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
)

// A cache whose disk refuses every page (ENOSPC with nothing left to
// evict, or EIO) still serves reads: what the worker fetched is handed to
// the reader from memory, the short-circuit reader falls back to the RPC,
// and the worker counts the failures. Before, every read failed with
// "cache: full".
func TestCacheThatCannotStoreStillServes(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			ffs := cachefs.NewFaulty(cachefs.OS())
			l := startLocalWith(t, 256<<20, nil, func(cfg *worker.Config, _ *retry.Policy) { cfg.Cache.FS = ffs })
			c := testcluster.Client(t, l.svc.Addr, "")
			ffs.Fail(cachefs.OpWrite, ".data", -1, errno)
			data := randomBytes(7, 3*testBlockSize+123)
			writeFile(t, c, "/full", data) // the blocks are not cached: counted
			for range 2 {
				got, err := c.ReadFile(context.Background(), "/full")
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read with a cache that cannot store: %d bytes, %v", len(got), err)
				}
			}
			if st := stats(t, c); st.CacheWriteErrors == 0 || st.Used != 0 {
				t.Fatalf("cache write errors %d, used %d: want some and none", st.CacheWriteErrors, st.Used)
			}
			// Random reads (ReadAt) take the same path, page by page.
			r, err := c.Open(context.Background(), "/full")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p := make([]byte, 3<<20)
			off := int64(testBlockSize - 1<<20)
			if _, err := r.ReadAt(p, off); err != nil || !bytes.Equal(p, data[off:off+int64(len(p))]) {
				t.Fatalf("ReadAt across a block boundary: %v", err)
			}
		})
	}
}

// A bucket that stops answering (every call hangs, as MinIO under SIGSTOP)
// fails reads and writes with an unavailable-class error once the retry
// budget is spent, instead of waiting for ever; the multipart upload the
// failed write started is aborted once the bucket answers again.
func TestHungBucketFailsInTheUnavailableClass(t *testing.T) {
	inj := faulty.NewInjector(1)
	var bucket object.Store
	l := startLocalWith(t, 256<<20, func(s object.Store) object.Store { bucket = s; return faulty.New(s, inj) },
		func(cfg *worker.Config, p *retry.Policy) {
			p.StallTimeout, p.MaxElapsed, p.MaxAttempts = 50*time.Millisecond, 300*time.Millisecond, 1000
			cfg.AbortRetryInterval = 10 * time.Millisecond
		})
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(8, 2*testBlockSize)
	writeFile(t, c, "/before", data)
	l.w.DropCache()

	inj.Set(faulty.Rule{Kind: faulty.Timeout}) // every call hangs until abandoned
	_, err := c.ReadFile(context.Background(), "/before")
	if !errors.Is(err, fserr.ErrUnavailable) || !strings.Contains(err.Error(), "bucket is unavailable") {
		t.Fatalf("read from a hung bucket: %v, want the unavailable class naming the bucket", err)
	}

	// A block of two parts, so that the worker starts a multipart upload,
	// whose parts hang; the abort fails too while the bucket hangs.
	inj.Set(faulty.Rule{Kind: faulty.Timeout, Ops: []object.Op{object.OpUploadPart, object.OpAbortMultipart}})
	const big = 20 << 20
	w, err := c.Create(context.Background(), "/during", client.CreateOptions{BlockSize: big})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(randomBytes(9, big))
	if err == nil {
		err = w.Close()
	} else {
		w.Close()
	}
	if !errors.Is(err, fserr.ErrUnavailable) {
		t.Fatalf("write to a hung bucket: %v, want the unavailable class", err)
	}
	if ups, err := bucket.ListUploads(context.Background(), "blocks/"); err != nil || len(ups) != 1 {
		t.Fatalf("uploads while the bucket hangs: %v %v, want the write's one", ups, err)
	}
	inj.Set() // the bucket answers again: the abandoned upload goes
	for i := 0; ; i++ {
		ups, err := bucket.ListUploads(context.Background(), "blocks/")
		if err == nil && len(ups) == 0 {
			break
		}
		if i == 1000 {
			t.Fatalf("uploads left after the bucket came back: %v %v", ups, err)
		}
		pollPause()
	}
}

// The sweep aborts uploads under blocks/ that a worker which died left
// (here: made by the test), once they are old enough.
func TestSweepAbortsOldUploads(t *testing.T) {
	var bucket object.Store
	l := startLocalWith(t, 256<<20, func(s object.Store) object.Store { bucket = s; return s },
		func(cfg *worker.Config, _ *retry.Policy) {
			cfg.SweepInterval, cfg.AbandonedUploadAge = 10*time.Millisecond, time.Nanosecond
		})
	c := testcluster.Client(t, l.svc.Addr, "")
	writeFile(t, c, "/x", randomBytes(1, 100<<10)) // opens the bucket
	ctx := context.Background()
	if _, err := bucket.CreateMultipart(ctx, "blocks/00000000000000ff/0000000000000001"); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		ups, err := bucket.ListUploads(ctx, "blocks/")
		if err == nil && len(ups) == 0 {
			break
		}
		if i == 1000 {
			t.Fatalf("uploads left: %v %v", ups, err)
		}
		pollPause()
	}
}

// A writer stops at the first block that failed, instead of streaming the
// rest of the file to workers whose uploads are doomed too (with a bucket
// that does not answer, each would wait out the retry budget, and the put
// would take that many budgets).
func TestWriterStopsAtTheFirstFailedBlock(t *testing.T) {
	inj := faulty.NewInjector(1)
	l := startLocal(t, 256<<20, func(s object.Store) object.Store { return faulty.New(s, inj) })
	c := testcluster.Client(t, l.svc.Addr, "")
	inj.Set(faulty.Rule{Kind: faulty.Error, Ops: []object.Op{object.OpPut}, Err: object.ErrTransient})
	w, err := c.Create(context.Background(), "/doomed", client.CreateOptions{BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	const blocks = 64
	chunk := randomBytes(13, 1<<20)
	written := 0
	for ; written < blocks*testBlockSize; written += len(chunk) {
		if _, err = w.Write(chunk); err != nil {
			break
		}
	}
	cerr := w.Close()
	if err == nil || !errors.Is(cerr, fserr.ErrUnavailable) {
		t.Fatalf("wrote all %d blocks (%v), close: %v; want a write to fail and the unavailable class", blocks, err, cerr)
	}
	t.Logf("the writer stopped after %d of %d MiB: %v", written>>20, blocks*testBlockSize>>20, err)
}
