package worker_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Storage policies on the data path, written short-circuit and through the
// worker's RPC: a policy set on a directory applies to the files created
// under it; a HOT file's blocks are pinned as they are written and stay
// cached under cache pressure while WARM ones are evicted; a COLD file's
// write leaves nothing in the cache, and reads back whole.
func TestStoragePoliciesOnTheDataPath(t *testing.T) {
	for _, sc := range []bool{true, false} {
		t.Run(fmt.Sprintf("short-circuit=%v", sc), func(t *testing.T) { testPolicies(t, sc) })
	}
}

func testPolicies(t *testing.T, shortCircuit bool) {
	ctx := context.Background()
	// Ten blocks: pins may take eight (the low watermark).
	l := startLocal(t, 10*testBlockSize, nil)
	c, err := client.New(client.Config{Meta: l.svc.Addr, Token: testcluster.Token(t, l.svc.Addr, ""),
		NoShortCircuit: !shortCircuit})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for dir, policy := range map[string]string{"/hot": "HOT", "/cold": "COLD"} {
		if _, err := c.Mkdirs(ctx, dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.SetStoragePolicy(ctx, dir, policy); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := c.StoragePolicy(ctx, "/hot/f"); err == nil {
		t.Fatalf("the policy of a file not created yet: %+v", p)
	}
	hot := randomBytes(31, 2*testBlockSize)
	writeFile(t, c, "/hot/f", hot)
	if p, err := c.StoragePolicy(ctx, "/hot/f"); err != nil || p.Name != "HOT" {
		t.Fatalf("the new file's policy: %+v %v", p, err)
	}
	if st := stats(t, c); st.PinnedBytes != uint64(len(hot)) {
		t.Fatalf("pinned %d bytes after writing a HOT file of %d", st.PinnedBytes, len(hot))
	}
	before := stats(t, c)
	cold := randomBytes(32, 2*testBlockSize+7)
	writeFile(t, c, "/cold/f", cold)
	after := stats(t, c)
	if after.CachedBlocks != before.CachedBlocks || after.BlocksWritten != before.BlocksWritten+3 {
		t.Fatalf("a COLD write: blocks cached %d -> %d, written %d -> %d", before.CachedBlocks, after.CachedBlocks,
			before.BlocksWritten, after.BlocksWritten)
	}
	if rep, err := c.CachedFile(ctx, "/cold/f"); err != nil || rep.Cached != 0 {
		t.Fatalf("the COLD file in the cache: %+v %v", rep, err)
	}
	for i := range 12 {
		writeFile(t, c, fmt.Sprintf("/warm/%d", i), randomBytes(uint64(40+i), testBlockSize))
	}
	st := stats(t, c)
	if st.Evictions == 0 {
		t.Fatalf("twelve WARM blocks through a cache of ten evicted nothing: %+v", st)
	}
	if rep, err := c.CachedFile(ctx, "/hot/f"); err != nil || rep.Cached != uint64(len(hot)) {
		t.Fatalf("the HOT file under pressure: %+v %v", rep, err)
	}
	if rep, err := c.CachedFile(ctx, "/warm/0"); err != nil || rep.Cached != 0 {
		t.Fatalf("the first WARM file under pressure: %+v %v", rep, err)
	}
	for path, want := range map[string][]byte{"/hot/f": hot, "/cold/f": cold} {
		if got, err := c.ReadFile(ctx, path); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %s: %v", path, err)
		}
	}
	if sc := st.ShortCircuitBlocksWritten > 0; sc != shortCircuit {
		t.Fatalf("short-circuit writes %d, want them %v", st.ShortCircuitBlocksWritten, shortCircuit)
	}
	checkPinRefusals(t, l, c, st)
}

// checkPinRefusals: a HOT file larger than the room for pins is cached
// but not all pinned, and the worker says so.
func checkPinRefusals(t *testing.T, l *local, c *client.Client, before *pb.WorkerStats) {
	big := randomBytes(50, 7*testBlockSize)
	writeFile(t, c, "/hot/big", big)
	st := stats(t, c)
	if st.PinRefusals == before.PinRefusals || st.PinnedBytes > 8*testBlockSize {
		t.Fatalf("pins past the low watermark: %+v", st)
	}
	if !strings.Contains(l.logs.String(), "the cache cannot pin more HOT blocks") {
		t.Fatalf("the worker did not say so:\n%s", l.logs.String())
	}
}

// checkStorageClassRefused: a policy of a storage class has the blocks
// written in that class, and a bucket without it (MinIO has none but
// STANDARD and REDUCED_REDUNDANCY) refuses the write: the writer is told
// why. (TestWriteAndReadBackAcrossSizes runs it on its cluster.)
func checkStorageClassRefused(t *testing.T, c *client.Client, ns string) {
	ctx := context.Background()
	dir := fmt.Sprintf("strata://%s/ia", ns)
	if _, err := c.Mkdirs(ctx, dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.SetStoragePolicy(ctx, dir, "IA"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Create(ctx, dir+"/f", client.CreateOptions{BlockSize: testBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(randomBytes(60, testBlockSize+1))
	if err == nil {
		err = w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "storage class") {
		t.Fatalf("a write in a storage class the bucket has not: %v", err)
	}
}
