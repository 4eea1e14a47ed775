package worker_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// tempPuts returns the sizes of the streamed Puts under way in a file://
// bucket (its temp files).
func tempPuts(t *testing.T, bucket string) []int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(bucket, ".strata-tmp"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var sizes []int64
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "put-") {
			continue
		}
		if info, err := e.Info(); err == nil {
			sizes = append(sizes, info.Size())
		}
	}
	return sizes
}

// Into a file:// bucket a block goes as its bytes arrive: before the block
// ends, they are in the bucket's temp file. A writer that goes away
// mid-block leaves no temp file, and loses nothing it had flushed.
func TestBlockStreamsIntoTheBucket(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := c.Create(ctx, "/streamed", client.CreateOptions{BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	data := randomBytes(9, testBlockSize+1<<20+2<<20)
	flushed := testBlockSize + 1<<20
	if _, err := w.Write(data[:flushed]); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[flushed:]); err != nil {
		t.Fatal(err)
	}
	// The client sends the 2 MiB written since the flush in two messages;
	// the worker writes them into the block's temp file as they arrive.
	for i := 0; ; i++ {
		if s := tempPuts(t, l.bucket); len(s) == 1 && s[0] == 2<<20 {
			break
		}
		if i == 1000 {
			t.Fatalf("no temp file of the block under way in the bucket: %v", tempPuts(t, l.bucket))
		}
		pollPause()
	}
	cancel() // the writer goes away mid-block
	for i := 0; len(tempPuts(t, l.bucket)) > 0; i++ {
		if i == 1000 {
			t.Fatalf("temp files left in the bucket: %v", tempPuts(t, l.bucket))
		}
		pollPause()
	}
	got, err := c.ReadFile(context.Background(), "/streamed")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data[:flushed]) {
		t.Fatalf("read %d bytes after the writer went away, want the %d flushed", len(got), flushed)
	}
}
