package client_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/metaserver"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/internal/worker"
)

// A file written for longer than a block access token lives goes on being
// written: each block opens its stream to the worker with the writer's
// token, the worker refuses an expired one, and the writer renews a token
// about to expire before its next block (with a flush of nothing). Here
// tokens live a second, and the writer's third block starts after the
// token of its create expired.
func TestWriterRenewsItsBlockTokenBetweenBlocks(t *testing.T) {
	const lifetime = time.Second
	svc := testcluster.StartInProcess(t, func(c *metaserver.Config) { c.BlockTokenLifetime = lifetime })
	testcluster.ServeWorker(t, worker.Config{StateDir: t.TempDir(), Meta: svc.Addr,
		Cache: cache.Config{Dirs: []cache.Dir{{Path: t.TempDir(), Capacity: 64 << 20}}}})
	c := testcluster.Client(t, svc.Addr, "")
	ctx := context.Background()

	const blockSize = 8 << 10 // past the inline limit, so that the file has blocks
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*blockSize/16)
	w, err := c.Create(ctx, "/long", client.CreateOptions{BlockSize: blockSize})
	if err != nil {
		t.Fatal(err)
	}
	// No earlier than the create's token.
	created := time.Now()
	if _, err := w.Write(data[:2*blockSize]); err != nil { // two blocks' streams
		t.Fatal(err)
	}
	// The create's token has expired once this passes: what is tested is
	// a write that outlives its token, so the test waits out the lifetime.
	time.Sleep(time.Until(created.Add(lifetime + 50*time.Millisecond)))
	if _, err := w.Write(data[2*blockSize:]); err != nil { // the third block's stream
		t.Fatalf("a block started after the create's token expired: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	r, err := c.Open(ctx, "/long")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
}
