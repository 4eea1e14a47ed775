package client

import (
	"context"
	"crypto/md5"
	"encoding/binary"

	"github.com/stratafs/strata/internal/crc32c"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// FileChecksum is a file's checksum in HDFS's COMPOSITE_CRC form: the
// CRC32C of its whole content, whatever its blocks and chunks, so that a
// file in Strata and one in HDFS (dfs.checksum.combine.mode=COMPOSITE_CRC)
// with the same bytes have equal checksums. HDFS's default form,
// MD5MD5CRC32C, is an MD5 of per-block MD5s of a CRC per 512 bytes: it
// depends on the block size and needs CRCs Strata does not keep, so
// Strata never gives it (docs/semantics.md, "Checksums").
type FileChecksum struct {
	CRC32C uint32
	Length int64 // the bytes it covers
}

// Algorithm is the form's name, Hadoop's FileChecksum.getAlgorithmName:
// COMPOSITE-CRC32C, or for no bytes what HDFS answers in every form (its
// "magic entry" for empty files), MD5-of-0MD5-of-0CRC32.
func (f *FileChecksum) Algorithm() string {
	if f.Length == 0 {
		return "MD5-of-0MD5-of-0CRC32"
	}
	return "COMPOSITE-CRC32C"
}

// Bytes is the checksum as Hadoop's getBytes gives it: the CRC, big-endian;
// for no bytes, HDFS's MD5MD5CRC32FileChecksum of the MD5 of 32 zero bytes,
// serialized (bytes per CRC as 4 bytes, CRCs per block as 8, the MD5).
func (f *FileChecksum) Bytes() []byte {
	if f.Length == 0 {
		sum := md5.Sum(make([]byte, 32))
		return append(make([]byte, 12), sum[:]...)
	}
	return binary.BigEndian.AppendUint32(nil, f.CRC32C)
}

// Checksum returns the checksum of file path. Each block's CRC comes from
// its home worker, which combines the CRCs its cache keeps of the block's
// chunks (fetching only the pages it misses), and the blocks' CRCs are
// combined here: no byte of a cached file is read. A small file's inline
// content and a flushed tail are checksummed from their bytes.
func (c *Client) Checksum(ctx context.Context, path string) (*FileChecksum, error) {
	r, err := c.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if r.inline != nil || len(r.blocks) == 0 && r.tailStart >= r.size {
		return &FileChecksum{CRC32C: crc32c.Update(0, r.inline), Length: r.size}, nil
	}
	var crc uint32
	for _, b := range r.blocks {
		bc, err := r.blockCRC(b)
		if err != nil {
			return nil, err
		}
		crc = crc32c.Combine(crc, bc, int64(b.Length))
	}
	if r.tailStart < r.size {
		tail := make([]byte, r.size-r.tailStart)
		if err := r.readTail(tail, r.tailStart); err != nil {
			return nil, err
		}
		crc = crc32c.Combine(crc, crc32c.Update(0, tail), int64(len(tail)))
	}
	return &FileChecksum{CRC32C: crc, Length: r.size}, nil
}

// blockCRC asks block b's workers for its CRC32C.
func (r *Reader) blockCRC(b *pb.Block) (uint32, error) {
	var crc uint32
	err := r.onWorkers(b, "checksum", func(w *pb.WorkerInfo, ref *pb.BlockRef) error {
		wc, err := r.c.workers.conn(w)
		if err != nil {
			return err
		}
		resp, err := wc.Checksum(r.ctx, &pb.ChecksumRequest{Blocks: []*pb.BlockRef{ref}})
		if err != nil {
			return rpcerr.FromStatus(err)
		}
		if len(resp.Crc32C) != 1 {
			return fserr.Errorf(fserr.ErrUnavailable, "checksum %s: worker %s answered %d CRCs for one block", r.Status.Path, w.Id, len(resp.Crc32C))
		}
		crc = resp.Crc32C[0]
		return nil
	})
	return crc, err
}
