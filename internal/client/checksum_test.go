package client_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/testcluster"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The checksum of a file is the CRC32C of its bytes, whatever its blocks:
// inline files, files of one and many 1 MiB blocks, a short last block, a
// flushed file's tail, and the same bytes written with another block size.
// A file whose blocks are cached is checksummed without a byte moving (the
// worker reads nothing from the bucket and sends nothing); one dropped
// from the cache is fetched into it once, and comes out the same.
func TestChecksumIsTheCRC32COfTheBytes(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	data := make([]byte, 3<<20+5)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name  string
		size  int
		block uint64
	}{{"empty", 0, 0}, {"one", 1, 0}, {"inline", 4096, 0}, {"past-inline", 4097, 0},
		{"blocks", len(data), 1 << 20}, {"whole-blocks", 2 << 20, 1 << 20}, {"other-block-size", len(data), 512 << 10}} {
		p := "/sums/" + tc.name
		w, err := c.Create(ctx, p, client.CreateOptions{BlockSize: tc.block})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:tc.size]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		before := workerBytes(t, c)
		sum, err := c.Checksum(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := crc32.Checksum(data[:tc.size], castagnoli); sum.CRC32C != want || sum.Length != int64(tc.size) {
			t.Fatalf("%s: checksum %08x of %d bytes, want %08x of %d", tc.name, sum.CRC32C, sum.Length, want, tc.size)
		}
		if after := workerBytes(t, c); after != before {
			t.Fatalf("%s: the checksum of a cached file moved bytes: %d before, %d after", tc.name, before, after)
		}
		wantBytes := []byte{byte(sum.CRC32C >> 24), byte(sum.CRC32C >> 16), byte(sum.CRC32C >> 8), byte(sum.CRC32C)}
		wantAlg := "COMPOSITE-CRC32C"
		if tc.size == 0 { // HDFS's answer for an empty file, in any form
			wantBytes, _ = hex.DecodeString("00000000000000000000000070bc8f4b72a86921468bf8e8441dce51")
			wantAlg = "MD5-of-0MD5-of-0CRC32"
		}
		if !bytes.Equal(sum.Bytes(), wantBytes) || sum.Algorithm() != wantAlg {
			t.Fatalf("%s: %s %x, want %s %x", tc.name, sum.Algorithm(), sum.Bytes(), wantAlg, wantBytes)
		}
	}
	if _, err := c.UncacheFile(ctx, "/sums/blocks"); err != nil {
		t.Fatal(err)
	}
	sum, err := c.Checksum(ctx, "/sums/blocks")
	if want := crc32.Checksum(data, castagnoli); err != nil || sum.CRC32C != want {
		t.Fatalf("after uncache: %v, %v; want %08x", sum, err, want)
	}
	if cached, err := c.CachedFile(ctx, "/sums/blocks"); err != nil || cached.Cached != uint64(len(data)) {
		t.Fatalf("after the checksum of an uncached file, the cache holds %+v (%v), want all %d bytes", cached, err, len(data))
	}
}

// The checksum of a file being written covers what was flushed: its
// blocks and its tail in the service.
func TestChecksumOfAFlushedFile(t *testing.T) {
	ctx := context.Background()
	c := testcluster.Client(t, dev(t), "")
	w, err := c.Create(ctx, "/open", client.CreateOptions{BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data := bytes.Repeat([]byte("flushed bytes "), 100_000)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	sum, err := c.Checksum(ctx, "/open")
	if want := crc32.Checksum(data, castagnoli); err != nil || sum.CRC32C != want || sum.Length != int64(len(data)) {
		t.Fatalf("checksum of a flushed file: %+v, %v; want %08x", sum, err, want)
	}
	if _, err := c.Checksum(ctx, "/"); err == nil {
		t.Fatal("the checksum of a directory did not fail")
	}
}

// workerBytes is what the workers moved: bytes read from the bucket and
// sent over their RPC.
func workerBytes(t *testing.T, c *client.Client) uint64 {
	t.Helper()
	stats, err := c.WorkerStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, s := range stats {
		n += s.BucketBytesRead + s.RpcBytesRead + s.ShortCircuitBytes
	}
	return n
}
