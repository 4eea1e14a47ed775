package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/cache"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/storagepolicy"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// scWrite is a block a writer on this host writes into a cache file itself
// (a short-circuit write, see ShortCircuitRequest.write): the worker never
// sees its bytes until the commit, when it reads the file once to checksum
// it and put it into the bucket, and keeps the file as the block's cached
// copy.
type scWrite struct {
	h      *pb.WriteHeader
	store  object.Store
	policy storagepolicy.Policy
	id     uint64
	max    uint64 // the most the block may hold
	in     *cache.Incoming
}

// scWriteOpen authorizes a short-circuit write of a new block of h's file
// and creates its cache file, with room for length bytes (0: the block
// size), answered with the file's path and lent by its descriptor (-1 with
// an error).
func (w *Worker) scWriteOpen(ctx context.Context, h *pb.WriteHeader, length uint64) (*scWrite, *pb.ShortCircuitResponse, int) {
	refuse := func(err error) (*scWrite, *pb.ShortCircuitResponse, int) {
		return nil, &pb.ShortCircuitResponse{Error: err.Error()}, -1
	}
	if h.InodeId == 0 || h.ObjectKey != "" {
		return refuse(fserr.Errorf(fserr.ErrInvalidArgument, "short-circuit write: a block-mode file's inode is needed"))
	}
	if err := blocks.CheckSize(h.BlockSize); err != nil {
		return refuse(fserr.Errorf(fserr.ErrInvalidArgument, "short-circuit write: %v", err))
	}
	g, err := w.authorize(ctx, access{mode: blocktoken.Write, namespace: h.Namespace, inode: h.InodeId,
		storeURI: h.StoreUri, token: h.BlockToken})
	if err != nil {
		return refuse(err)
	}
	store, err := w.storeFor(ctx, g.uri, g.policy)
	if err != nil {
		return refuse(err)
	}
	// NB: a COLD file's block is written through a cache file all the
	// same (the writer's bytes cross no socket), dropped once uploaded.
	s := &scWrite{h: h, store: store, policy: g.policy, id: blocks.NewID(), max: h.BlockSize}
	if length > 0 {
		s.max = min(length, h.BlockSize)
	}
	// NB: the cache reserves (and allocates) the room until the commit: a
	// writer of a small file says how small, so that it does not have a
	// whole block's room evicted for it.
	s.in, err = w.cache.Create(blocks.CacheKey(h.InodeId, s.id), int64(s.max))
	if err != nil {
		// A full cache: the writer streams the block over the RPC, whose
		// caching is best effort.
		return refuse(fmt.Errorf("short-circuit write: %w", err))
	}
	return s, &pb.ShortCircuitResponse{Ok: true, Path: s.in.Path, BlockSize: s.max}, int(s.in.File.Fd())
}

// scWriteCommit ends s, the block the connection opened (nil if none): the
// file must hold exactly length bytes. It answers once the block is in the
// bucket, and caches it (best effort, as a streamed block).
func (w *Worker) scWriteCommit(ctx context.Context, s *scWrite, length uint64) *pb.ShortCircuitResponse {
	refuse := func(err error) *pb.ShortCircuitResponse {
		if s != nil {
			s.in.Abort()
			w.cfg.Log.Warn("short-circuit write failed", "path", s.h.Path, "inode", s.h.InodeId, "err", err)
		}
		return &pb.ShortCircuitResponse{Error: err.Error(), Unavailable: errors.Is(err, fserr.ErrUnavailable)}
	}
	if s == nil {
		return refuse(fserr.Errorf(fserr.ErrInvalidArgument, "short-circuit commit: this connection opened no block"))
	}
	size, err := s.in.Size()
	if err != nil {
		return refuse(err)
	}
	if length == 0 || length > s.max || uint64(size) != length {
		return refuse(fserr.Errorf(fserr.ErrInvalidArgument,
			"short-circuit commit: %d bytes committed, the file holds %d, the block at most %d", length, size, s.max))
	}
	n := int64(length)
	sum := newChunkSummer(s.in.File, n, s.in.ChunkSize())
	if err := w.uploadBlock(ctx, s.store, s.h.InodeId, s.id, sum, n); err != nil {
		return refuse(err)
	}
	w.stats.shortCircuitBlocksWritten.Add(1)
	w.stats.shortCircuitBytesWritten.Add(length)
	key := blocks.CacheKey(s.h.InodeId, s.id)
	crcs, err := sum.sums()
	switch {
	case err == nil && s.policy.NoCache:
		s.in.Abort()
	case err == nil:
		if err = s.in.Commit(n, crcs); err == nil {
			w.pin(key, s.policy)
		}
	default:
		s.in.Abort()
	}
	if err != nil {
		w.cacheFailed(key, err)
	}
	return &pb.ShortCircuitResponse{Ok: true, Block: &pb.Block{BlockId: s.id, Length: length}}
}

// chunkSummer reads a file for an upload and takes the CRC32C of every
// chunk a read covers whole as it passes, so that the file is read once for
// both; sums reads the chunks no read covered (an upload reading in pieces
// that do not fall on chunks).
type chunkSummer struct {
	r     io.ReaderAt
	size  int64
	chunk int64
	mu    sync.Mutex
	crcs  []uint32
	have  []bool
}

func newChunkSummer(r io.ReaderAt, size, chunk int64) *chunkSummer {
	n := (size + chunk - 1) / chunk
	return &chunkSummer{r: r, size: size, chunk: chunk, crcs: make([]uint32, n), have: make([]bool, n)}
}

func (s *chunkSummer) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.r.ReadAt(p, off)
	end := off + int64(n)
	for i := (off + s.chunk - 1) / s.chunk; i*s.chunk < end; i++ {
		lo, hi := i*s.chunk, min((i+1)*s.chunk, s.size)
		if hi > end {
			break
		}
		crc := cache.Checksum(p[lo-off : hi-off])
		s.mu.Lock()
		s.crcs[i], s.have[i] = crc, true
		s.mu.Unlock()
	}
	return n, err
}

// sums returns the CRC of every chunk.
func (s *chunkSummer) sums() ([]uint32, error) {
	var buf []byte
	for i, ok := range s.have {
		if ok {
			continue
		}
		lo := int64(i) * s.chunk
		if buf == nil {
			buf = make([]byte, s.chunk)
		}
		p := buf[:min(s.chunk, s.size-lo)]
		if _, err := s.r.ReadAt(p, lo); err != nil {
			return nil, err
		}
		s.crcs[i] = cache.Checksum(p)
	}
	return s.crcs, nil
}
