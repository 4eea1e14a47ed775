package client

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/scproto"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// openBlock opens the sink of a new block: the cache file of the worker on
// this host, written directly (short-circuit), if there is one that lends
// it; else a stream to a worker (openStream).
func (w *Writer) openBlock() (blockSink, error) {
	list, err := w.c.workers.live(w.ctx, false)
	if err != nil {
		return nil, err
	}
	if order := w.c.workers.writerOrder(list, w.ino); len(order) > 0 && w.c.workers.local(order[0]) {
		return &lazyBlock{w: w, wk: order[0]}, nil
	}
	return w.openStream()
}

// lazyBlock is a block for the worker on this host that opens its sink
// only once it holds more than a chunk or ends: a block that ends first (a
// small file, a file's last block) is opened with its length, so that the
// worker sets aside room for that much, not a whole block. A worker that
// does not lend a file gets the block by a stream.
type lazyBlock struct {
	w    *Writer
	wk   *pb.WorkerInfo
	head []byte // what was written before the sink opened
	mu   struct {
		sync.Mutex
		sink      blockSink
		cancelled bool
	}
}

func (b *lazyBlock) write(p []byte) error {
	b.mu.Lock()
	sink := b.mu.sink
	b.mu.Unlock()
	if sink == nil {
		if len(b.head)+len(p) <= sendChunk {
			b.head = append(b.head, p...)
			return nil
		}
		var err error
		if sink, err = b.open(0); err != nil {
			return err
		}
	}
	return sink.write(p)
}

// open opens the sink for a block of length bytes (0: unknown) and writes
// the head into it.
func (b *lazyBlock) open(length uint64) (blockSink, error) {
	var sink blockSink
	sc, err := b.w.openSCBlock(b.wk, length)
	if err == nil {
		sink = sc
	} else {
		// Refused or unreachable: the stream says why, if it fails too.
		bs, err := b.w.openStream()
		if err != nil {
			return nil, err
		}
		sink = bs
	}
	b.mu.Lock()
	cancelled := b.mu.cancelled
	b.mu.sink = sink
	b.mu.Unlock()
	if cancelled {
		sink.cancel()
		return nil, errors.New("the block was abandoned")
	}
	head := b.head
	b.head = nil
	return sink, sink.write(head)
}

func (b *lazyBlock) finish() (*pb.WriteResponse, error) {
	b.mu.Lock()
	sink := b.mu.sink
	b.mu.Unlock()
	if sink == nil {
		var err error
		if sink, err = b.open(uint64(len(b.head))); err != nil {
			return nil, err
		}
	}
	return sink.finish()
}

func (b *lazyBlock) cancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mu.cancelled = true
	if b.mu.sink != nil {
		b.mu.sink.cancel()
	}
}

// scBlock is a block written straight into a cache file of the worker on
// this host (ShortCircuitRequest.write): no byte of it passes through the
// worker's RPC. The connection that opened it commits it.
type scBlock struct {
	addr  string // the worker's, for errors
	pool  *scPool
	conn  *net.UnixConn
	f     *os.File
	max   int64 // the block's size
	n     int64 // bytes written to f
	chunk []byte
	mu    struct {
		sync.Mutex
		ended bool // cancelled, or committed (conn back in the pool)
	}
}

// openSCBlock asks wk for a cache file for the writer's next block, of
// length bytes (0: unknown, up to the block size).
func (w *Writer) openSCBlock(wk *pb.WorkerInfo, length uint64) (*scBlock, error) {
	p := w.c.workers.scPool(w.c.workers.socket(wk))
	conn, err := p.get()
	if err != nil {
		return nil, err
	}
	req := &pb.ShortCircuitRequest{Write: w.writeHeader(), Length: length, TraceId: trace.FromContext(w.ctx)}
	want := w.blockSize
	if length > 0 {
		want = length
	}
	resp := &pb.ShortCircuitResponse{}
	fd := -1
	if err = scproto.Write(conn, req, nil); err == nil {
		fd, err = scproto.ReadFD(conn, resp)
	}
	if err == nil && (!resp.Ok || fd < 0 || resp.BlockSize < want) {
		closeFD(fd)
		err = fmt.Errorf("short-circuit write refused: %s", resp.Error)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &scBlock{addr: wk.Address, pool: p, conn: conn, f: os.NewFile(uintptr(fd), resp.Path), max: int64(want)}, nil
}

// write writes p into the file: in sendChunk pieces, small writes gathered
// first, so that the page cache holds the file in large folios (as the
// cache's own writes do, for short-circuit readers who map it).
func (b *scBlock) write(p []byte) error {
	if b.n+int64(len(b.chunk)+len(p)) > b.max {
		return fserr.Errorf(fserr.ErrInvalidArgument, "short-circuit write: more than the block's %d bytes", b.max)
	}
	return gather(&b.chunk, p, true, b.writeOut)
}

func (b *scBlock) flush() error { return flushChunk(&b.chunk, b.writeOut) }

func (b *scBlock) writeOut(p []byte) error {
	if _, err := b.f.WriteAt(p, b.n); err != nil {
		return fmt.Errorf("short-circuit write into the worker's cache file: %w", err)
	}
	b.n += int64(len(p))
	return nil
}

// finish commits the block: the worker puts the file into the bucket and
// answers once it is there.
func (b *scBlock) finish() (*pb.WriteResponse, error) {
	if err := b.flush(); err != nil {
		b.cancel()
		return nil, err
	}
	b.f.Close()
	resp := &pb.ShortCircuitResponse{}
	err := scproto.Write(b.conn, &pb.ShortCircuitRequest{Commit: &pb.ShortCircuitCommit{Length: uint64(b.n)}}, nil)
	if err == nil {
		err = scproto.Read(b.conn, resp)
	}
	b.mu.Lock()
	cancelled := b.mu.ended
	b.mu.ended = true
	b.mu.Unlock()
	switch {
	case cancelled:
		return nil, errors.New("short-circuit write: the block was abandoned")
	case err != nil:
		b.conn.Close()
		return nil, socketErr(b.addr, err)
	}
	b.pool.put(b.conn)
	switch {
	case !resp.Ok && resp.Unavailable:
		return nil, fserr.Errorf(fserr.ErrUnavailable, "%s", resp.Error)
	case !resp.Ok:
		return nil, errors.New(resp.Error)
	case resp.Block == nil || int64(resp.Block.Length) != b.n:
		return nil, fmt.Errorf("short-circuit commit: the worker answered %v for %d bytes", resp.Block, b.n)
	}
	return &pb.WriteResponse{Blocks: []*pb.Block{resp.Block}, Length: uint64(b.n)}, nil
}

// cancel closes the connection, which abandons the block (the worker
// removes its file), and the file.
func (b *scBlock) cancel() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.mu.ended {
		b.mu.ended = true
		b.conn.Close()
		b.f.Close()
	}
}

// socketErr words a failed exchange on the short-circuit socket of the
// worker at addr as a call that got no answer (unavailable), as a stream's
// would be: the worker died or restarted.
func socketErr(addr string, err error) error {
	return fmt.Errorf("worker at %s: %w", addr,
		&rpcerr.TransportError{Code: codes.Unavailable, Msg: rpcerr.Cause(codes.Unavailable, err.Error())})
}
