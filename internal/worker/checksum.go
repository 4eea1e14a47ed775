package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/crc32c"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// maxChecksumBlocks bounds the blocks of one Checksum request: each may
// make the worker fetch a block from the bucket.
const maxChecksumBlocks = 1024

// Checksum implements WorkerService: the CRC32C of each whole block, from
// the CRCs the cache keeps of its chunks. A block the cache holds whole
// costs no read at all; the pages it misses are fetched first, as for a
// read, and then stay cached.
func (w *Worker) Checksum(ctx context.Context, r *pb.ChecksumRequest) (*pb.ChecksumResponse, error) {
	if len(r.GetBlocks()) > maxChecksumBlocks {
		return nil, fmt.Errorf("checksum: %d blocks in one request, more than %d", len(r.GetBlocks()), maxChecksumBlocks)
	}
	resp := &pb.ChecksumResponse{Crc32C: make([]uint32, len(r.GetBlocks()))}
	for i, ref := range r.GetBlocks() {
		if err := checkRange(ref, 0, ref.GetLength()); err != nil {
			return nil, err
		}
		if _, err := w.authorizeRef(ctx, ref, blocktoken.Read); err != nil {
			return nil, err
		}
		crc, err := w.blockCRC(ctx, ref)
		if err != nil {
			return nil, err
		}
		resp.Crc32C[i] = crc
	}
	return resp, nil
}

// blockCRC is the CRC32C of the block ref names. A block whose pages are
// evicted between their fetch and the combination of their CRCs is tried
// again; one the cache cannot hold (it is smaller than the block, or
// refuses to store) is checksummed from its bytes instead, read from
// wherever they are.
func (w *Worker) blockCRC(ctx context.Context, ref *pb.BlockRef) (uint32, error) {
	n := int64(ref.Length)
	if n == 0 {
		return 0, nil
	}
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	for range 3 {
		held, _, err := w.ensureCached(ctx, ref, 0, n, false)
		if err != nil {
			return 0, err
		}
		if len(held) > 0 {
			break
		}
		crc, err := w.cache.CRC(key, n)
		if err == nil {
			return crc, nil
		}
		if !errors.Is(err, cache.ErrMiss) {
			return 0, fmt.Errorf("checksum of %s: %w", key, err)
		}
	}
	return w.readCRC(ctx, ref)
}

// readCRC is the CRC32C of the block's bytes, read a buffer at a time.
func (w *Worker) readCRC(ctx context.Context, ref *pb.BlockRef) (uint32, error) {
	n := int64(ref.Length)
	buf := make([]byte, min(chunkSize, n))
	var crc uint32
	for off := int64(0); off < n; {
		p := buf[:min(int64(len(buf)), n-off)]
		if err := w.readInto(ctx, ref, p, off, false); err != nil {
			return 0, err
		}
		crc = crc32c.Update(crc, p)
		off += int64(len(p))
	}
	return crc, nil
}
