package worker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/testcluster"
)

// MinIO stopped by SIGSTOP (it keeps its connections and answers nothing)
// during a cold read and during a put: both fail in the unavailable class
// once the workers' retry budget is spent (--bucket-stall-timeout 2s,
// --bucket-retry-budget 4s: a bound of about 6 s, 8 s for a read whose
// body stalls; the times are logged, not asserted), instead of waiting for
// as long as MinIO is stopped. Once MinIO resumes it runs the requests it
// had queued, CreateMultipart among them, and no multipart upload is left
// behind: the workers abort what they abandoned.
func TestMinioStoppedDuringReadAndPut(t *testing.T) {
	mc := startMinioCluster(t, "--bucket-stall-timeout", "2s", "--bucket-retry-budget", "4s",
		"--bucket-abort-interval", "200ms")
	c := testcluster.Client(t, mc.meta.Addr, "")
	ctx := context.Background()
	path := func(p string) string { return fmt.Sprintf("strata://%s%s", mc.ns, p) }
	data := randomBytes(11, 16*testBlockSize)
	writeFile(t, c, path("/cold"), data)
	if _, err := c.UncacheFile(ctx, path("/cold")); err != nil {
		t.Fatal(err)
	}

	r, err := c.Open(ctx, path("/cold"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 1<<20)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	mc.minio.Pause(t)
	start := time.Now()
	read := len(buf)
	for err == nil {
		var n int
		n, err = r.Read(buf)
		if !bytes.Equal(buf[:n], data[read:read+n]) {
			t.Fatalf("wrong bytes at %d", read)
		}
		read += n
	}
	t.Logf("cold read with MinIO stopped after its first MiB: %d of %d bytes, then after %v: %v",
		read, len(data), time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, fserr.ErrUnavailable) || !strings.Contains(err.Error(), "bucket is unavailable") {
		t.Fatalf("read from a stopped MinIO: %v, want the unavailable class naming the bucket", err)
	}

	// Blocks of two parts, so that the workers go multipart.
	start = time.Now()
	w, err := c.Create(ctx, path("/put"), client.CreateOptions{BlockSize: 20 << 20})
	if err != nil {
		t.Fatal(err)
	}
	put := randomBytes(12, 3*20<<20)
	_, err = w.Write(put)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	t.Logf("put of %d MiB with MinIO stopped: failed after %v: %v", len(put)>>20, time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, fserr.ErrUnavailable) {
		t.Fatalf("put to a stopped MinIO: %v, want the unavailable class", err)
	}

	mc.minio.Resume(t)
	for i := 0; ; i++ {
		ups, err := mc.minio.PendingUploads()
		if err != nil {
			t.Fatal(err)
		}
		if len(ups) == 0 {
			break
		}
		if i == 3000 {
			t.Fatalf("multipart uploads left after MinIO resumed: %v", ups)
		}
		pollPause()
	}
	aborted := 0
	for _, w := range mc.workers {
		aborted += strings.Count(w.Stderr(), "aborted an upload a lost answer had started")
	}
	t.Logf("uploads MinIO started from requests it had queued, aborted by the workers: %d", aborted)
	if got, err := c.ReadFile(ctx, path("/cold")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("reading back after MinIO resumed: %v", err)
	}
	if _, err := c.Stat(ctx, path("/put")); !errors.Is(err, fserr.ErrNotFound) {
		t.Fatalf("the failed put's file: %v, want it gone", err)
	}
}
