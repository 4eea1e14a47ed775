package worker

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/scproto"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// serveShortCircuit answers short-circuit requests on the Unix socket until
// ctx ends (see ShortCircuitRequest in worker.proto).
func (w *Worker) serveShortCircuit(ctx context.Context, lis *net.UnixListener) {
	for {
		conn, err := lis.AcceptUnix()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				w.cfg.Log.Warn("short-circuit accept", "err", err)
			}
			return
		}
		go w.shortCircuitConn(ctx, conn)
	}
}

func (w *Worker) shortCircuitConn(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	for {
		req := &pb.ShortCircuitRequest{}
		if err := scproto.Read(conn, req); err != nil {
			return
		}
		resp, fd, release := w.shortCircuit(ctx, req)
		var rights []byte
		if fd >= 0 {
			rights = syscall.UnixRights(fd)
		}
		err := scproto.Write(conn, resp, rights)
		release()
		if err != nil {
			return
		}
	}
}

// shortCircuit makes the requested range cached and returns the block's
// cache file descriptor with the CRCs of its pages. The caller calls release
// once the descriptor is sent.
func (w *Worker) shortCircuit(ctx context.Context, req *pb.ShortCircuitRequest) (*pb.ShortCircuitResponse, int, func()) {
	none := func() {}
	ref := req.GetBlock()
	if err := checkRange(ref, req.Offset, req.Length); err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	key := blocks.CacheKey(ref.InodeId, ref.BlockId)
	if req.Invalidate {
		w.cache.Invalidate(key, int64(req.Offset), int64(req.Length))
	}
	if err := w.ensureCached(ctx, ref, int64(req.Offset), int64(req.Length)); err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	h, err := w.cache.Acquire(key, int64(req.Offset), int64(req.Length))
	if err != nil {
		return &pb.ShortCircuitResponse{Error: err.Error()}, -1, none
	}
	w.stats.shortCircuitOpens.Add(1)
	w.stats.shortCircuitBytes.Add(req.Length)
	w.readAhead(ref, int64(req.Offset), int64(req.Length))
	return &pb.ShortCircuitResponse{Ok: true, PageSize: uint64(h.PageSize), FirstPage: uint64(h.FirstPage),
		Crcs: h.CRCs, BlockLength: ref.Length, Path: h.Path}, int(h.File.Fd()), h.Release
}
