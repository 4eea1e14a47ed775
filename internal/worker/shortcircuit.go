package worker

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/connlimit"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/scproto"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// serveShortCircuit answers short-circuit requests on the Unix socket lis
// (bounded by a connlimit.Listener in Serve) until ctx ends (see
// ShortCircuitRequest in worker.proto).
func (w *Worker) serveShortCircuit(ctx context.Context, lis net.Listener) {
	for {
		c, err := lis.Accept()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				w.cfg.Log.Warn("short-circuit accept", "err", err)
			}
			return
		}
		go w.shortCircuitConn(connlimit.NewContext(ctx, c), c)
	}
}

// shortCircuitConn serves one client's connection c: reads, and the
// short-circuit writes of one block at a time (open is the block written,
// which a connection that ends or asks anything but its commit abandons).
func (w *Worker) shortCircuitConn(ctx context.Context, c net.Conn) {
	var open *scWrite
	defer func() {
		if open != nil {
			open.in.Abort()
		}
		c.Close()
	}()
	conn, ok := connlimit.Unwrap(c).(*net.UnixConn)
	if !ok {
		return
	}
	for {
		req := &pb.ShortCircuitRequest{}
		if err := scproto.Read(conn, req); err != nil {
			return
		}
		if open != nil && req.Commit == nil {
			open.in.Abort()
			open = nil
		}
		var resp *pb.ShortCircuitResponse
		fd, release := -1, func() {}
		start := time.Now()
		switch {
		case trace.Check(req.TraceId) != nil:
			resp = &pb.ShortCircuitResponse{Error: trace.Check(req.TraceId).Error()}
		case req.Hello != nil:
			resp = w.hello(req.Hello)
		case req.Write != nil:
			open, resp, fd = w.scWriteOpen(ctx, req.Write, req.Length)
		case req.Commit != nil:
			resp = w.scWriteCommit(ctx, open, req.Commit.Length)
			open = nil
		default:
			resp, fd, release = w.shortCircuit(ctx, req)
		}
		var rights []byte
		if fd >= 0 {
			rights = syscall.UnixRights(fd)
		}
		err := scproto.Write(conn, resp, rights)
		release()
		w.slowShortCircuit(req, resp, time.Since(start))
		if err != nil {
			return
		}
	}
}

// slowShortCircuit logs a short-circuit request that took the slow-call
// threshold or longer (Config.SlowCall), with its trace id.
func (w *Worker) slowShortCircuit(req *pb.ShortCircuitRequest, resp *pb.ShortCircuitResponse, took time.Duration) {
	if took < w.cfg.SlowCall {
		return
	}
	b, what := req.GetBlock(), "read"
	if req.Write != nil || req.Commit != nil {
		what = "write"
	}
	w.cfg.Log.Warn("slow short-circuit "+what, "took", took.Round(time.Microsecond), "trace", req.TraceId,
		"inode", b.GetInodeId()|req.GetWrite().GetInodeId(), "block", b.GetBlockId(), "offset", req.Offset,
		"length", req.Length, "err", resp.GetError())
}

// shortCircuit makes the requested range cached and lends the block's
// cache file: its descriptor, with the CRCs of the range's pages (or
// chunks, if asked) and of the cached pages that follow it (up to
// grantAhead; for a random reader, those before it too), which the client may read
// on its own for a while (a lease, see internal/client). The caller calls
// release once the descriptor is sent.
func (w *Worker) shortCircuit(ctx context.Context, req *pb.ShortCircuitRequest) (*pb.ShortCircuitResponse, int, func()) {
	none := func() {}
	ref := req.GetBlock()
	if err := checkRange(ref, req.Offset, req.Length); err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	// NB: no descriptor, and no invalidation, without a valid read token.
	policy, err := w.authorizeRef(ctx, ref, blocktoken.Read)
	if err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	if req.Invalidate {
		w.cfg.Log.Warn("a short-circuit reader found a corrupt page in the cache; its pages are dropped and fetched again",
			"key", key, "offset", req.Offset, "length", req.Length)
		w.cache.Invalidate(key, int64(req.Offset), int64(req.Length))
	}
	held, missed, err := w.ensureCached(ctx, ref, int64(req.Offset), int64(req.Length), req.Random)
	w.stats.count(missed)
	if err != nil {
		// A bucket that did not answer would make the RPC wait as long.
		return &pb.ShortCircuitResponse{Error: err.Error(), Unavailable: errors.Is(err, fserr.ErrUnavailable)}, -1, none
	}
	if len(held) > 0 {
		// Nothing to lend: the reader asks the RPC, which serves what the
		// cache could not store.
		return &pb.ShortCircuitResponse{Error: "the cache could not store the range"}, -1, none
	}
	off := int64(req.Offset)
	start := off
	if req.Random {
		start = w.grantStart(ref, off)
	}
	h, err := w.cache.Acquire(key, start, w.grantEnd(ref, off, int64(req.Length))-start)
	if err != nil {
		// Pages around the range went meanwhile: lend the range alone.
		start = off
		h, err = w.cache.Acquire(key, off, int64(req.Length))
	}
	if err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	w.pin(key, policy)
	w.stats.shortCircuitOpens.Add(1)
	w.stats.shortCircuitBytes.Add(uint64(h.FirstPage + h.Length - start)) // lent, read now or later
	if !req.Random {
		w.readAhead(ref, off, h.FirstPage+h.Length-off)
	}
	resp := &pb.ShortCircuitResponse{Ok: true, PageSize: uint64(h.PageSize), FirstPage: uint64(h.FirstPage),
		BlockLength: ref.Length, Path: h.Path}
	if req.Chunks {
		resp.ChunkSize, resp.ChunkCrcs = uint64(h.ChunkSize), h.CRCs
	} else {
		resp.Crcs = h.PageCRCs()
	}
	return resp, int(h.File.Fd()), h.Release
}

// grantStart returns the start of the range to lend a random reader asking
// for [off, ...): up to grantAhead before it, over the pages cached there,
// so that one lease serves the reads of the block that land before as well
// as after this one. Lent from off on, a reader reading here and there
// would come back for a new lease (a round trip, a descriptor and a
// mapping) at every read before the lease's first page.
func (w *Worker) grantStart(ref *pb.BlockRef, off int64) int64 {
	from := max(0, off-grantAhead)
	if from == off {
		return off
	}
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	if missing := w.cache.Missing(key, from, off-from); len(missing) > 0 {
		last := missing[len(missing)-1]
		return min(off, last.Off+last.Len)
	}
	return from
}

// grantAhead is how far past the requested range a short-circuit answer
// lends the pages that are cached, so that a client reading on reads them
// without asking again.
const grantAhead = 64 << 20

// grantEnd returns the end of the range to lend for a request of
// [off, off+n): grantAhead past it (to the block's end at most) if all of
// that is cached, else at most one fetch chunk past it over the pages that
// are cached.
//
// NB: a reader streaming a block that is being fetched must come back
// often: read-ahead moves on only when it does. Lent all that read-ahead
// had landed (16 MiB at once), it would read it all before asking again,
// and the bucket link would idle meanwhile, once per 16 MiB.
func (w *Worker) grantEnd(ref *pb.BlockRef, off, n int64) int64 {
	end := off + n
	limit := min(int64(ref.Length), end+grantAhead)
	if limit <= end {
		return end
	}
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	if missing := w.cache.Missing(key, end, limit-end); len(missing) > 0 {
		return max(end, min(missing[0].Off, end+w.cfg.FetchChunk))
	}
	return limit
}
