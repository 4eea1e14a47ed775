package worker_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

// A client on the worker's host writes each block into a cache file of the
// worker itself (short-circuit): the blocks reach the bucket and the cache
// all the same, and read back. With short-circuit off, the blocks stream
// over the worker's RPC.
func TestWritesAreShortCircuit(t *testing.T) {
	l := startLocal(t, 256<<20, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(21, 2*testBlockSize+12345)
	writeFile(t, c, "/sc", data)
	st := stats(t, c)
	if st.ShortCircuitBlocksWritten != 3 || st.ShortCircuitBytesWritten != uint64(len(data)) ||
		st.BlocksWritten != 3 || st.BucketBytesWritten != uint64(len(data)) || st.Used != uint64(len(data)) {
		t.Fatalf("after a short-circuit write: %+v", st)
	}
	l.w.DropCache() // the reads below fetch from the bucket
	if got, err := c.ReadFile(context.Background(), "/sc"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}

	rpc, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.AdminToken(t, l.svc.Addr), NoShortCircuit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	writeFile(t, rpc, "/rpc", data)
	if after := stats(t, c); after.ShortCircuitBlocksWritten != 3 || after.BlocksWritten != 6 {
		t.Fatalf("a write with short-circuit off: %+v", after)
	}
	if got, err := c.ReadFile(context.Background(), "/rpc"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}

// A worker whose cache has no room for a whole block refuses to lend a file
// for it; the client streams the block over the RPC instead (whose caching
// is best effort), and the write succeeds as before. The file's last
// block, whose length the client knows when it opens it, needs only that
// much room, and goes short-circuit.
func TestWriteWithNoRoomForABlockStreams(t *testing.T) {
	l := startLocal(t, testBlockSize/2, nil)
	c := testcluster.Client(t, l.svc.Addr, "")
	data := randomBytes(22, testBlockSize+1)
	writeFile(t, c, "/small-cache", data)
	if st := stats(t, c); st.ShortCircuitBlocksWritten != 1 || st.ShortCircuitBytesWritten != 1 || st.BlocksWritten != 2 {
		t.Fatalf("a write to a cache with no room for a block: %+v", st)
	}
	if got, err := c.ReadFile(context.Background(), "/small-cache"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}
