package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// sendChunk is the size of one message of a write stream.
const sendChunk = 1 << 20

// blocksInFlight bounds the finished blocks of one writer that its
// workers are still uploading: the writer goes on with the next block
// meanwhile, and waits beyond that.
const blocksInFlight = 4

// blockSink takes one block of a file: a stream to a worker, or a cache
// file of a worker on this host written directly (short-circuit).
type blockSink interface {
	write(p []byte) error
	// finish ends the block and returns what the worker made of it, once
	// the block is in the bucket.
	finish() (*pb.WriteResponse, error)
	// cancel abandons the block; idempotent.
	cancel()
}

// blockStream is one stream to a worker: a block of a file (in block mode
// each block has a stream of its own, so that the writer learns of each
// block as it is finished), or the whole object of a cache-mode file.
type blockStream struct {
	addr   string // the worker's
	stream pb.WorkerService_WriteClient
	stop   context.CancelFunc
	chunk  []byte
	n      int64
}

func (b *blockStream) cancel() { b.stop() }

// openStream opens a stream to a worker for the content from offset at:
// one on this host first, then by rendezvous on the inode.
func (w *Writer) openStream() (*blockStream, error) {
	list, err := w.c.workers.live(w.ctx, false)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, wk := range w.c.workers.writerOrder(list, w.ino) {
		wc, err := w.c.workers.conn(wk)
		if err != nil {
			lastErr = err
			continue
		}
		ctx, cancel := context.WithCancel(w.ctx)
		stream, err := wc.Write(ctx)
		if err == nil {
			err = stream.Send(&pb.WriteRequest{Msg: &pb.WriteRequest_Header{Header: w.writeHeader()}})
		}
		if err != nil {
			cancel()
			lastErr = fromWorker(wk.Address, err)
			continue
		}
		return &blockStream{addr: wk.Address, stream: stream, stop: cancel, chunk: make([]byte, 0, sendChunk)}, nil
	}
	return nil, lastErr
}

// writeHeader describes the writer's content to a worker, with its token.
func (w *Writer) writeHeader() *pb.WriteHeader {
	return &pb.WriteHeader{StoreUri: w.storeURI, InodeId: w.ino, BlockSize: w.blockSize, Path: w.path,
		ObjectKey: w.objectKey, Namespace: w.hdr.GetNamespace(), BlockToken: w.token.get()}
}

// NB: not direct: a sent message may be read after Send returns (by stats
// handlers), so it must not be the caller's buffer.
func (b *blockStream) write(p []byte) error { return gather(&b.chunk, p, false, b.send) }

func (b *blockStream) flush() error { return flushChunk(&b.chunk, b.send) }

func (b *blockStream) send(p []byte) error {
	if err := b.stream.Send(&pb.WriteRequest{Msg: &pb.WriteRequest_Data{Data: p}}); err != nil {
		return b.streamErr(err)
	}
	b.n += int64(len(p))
	return nil
}

// gather hands p on to out in pieces of sendChunk bytes, gathered in
// *chunk (allocated at the first use), which out gets whenever it is full;
// the caller flushes the rest. With direct, whole chunks of p go to out
// from p, without the copy, when nothing is gathered.
func gather(chunk *[]byte, p []byte, direct bool, out func([]byte) error) error {
	for len(p) > 0 {
		if direct && len(*chunk) == 0 && len(p) >= sendChunk {
			if err := out(p[:sendChunk]); err != nil {
				return err
			}
			p = p[sendChunk:]
			continue
		}
		if *chunk == nil {
			*chunk = make([]byte, 0, sendChunk)
		}
		n := min(len(p), sendChunk-len(*chunk))
		*chunk, p = append(*chunk, p[:n]...), p[n:]
		if len(*chunk) == sendChunk {
			if err := flushChunk(chunk, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushChunk hands what *chunk gathered, if anything, to out.
func flushChunk(chunk *[]byte, out func([]byte) error) error {
	if len(*chunk) == 0 {
		return nil
	}
	err := out(*chunk)
	*chunk = (*chunk)[:0]
	return err
}

// finish ends the stream and returns what the worker made of it.
func (b *blockStream) finish() (*pb.WriteResponse, error) {
	defer b.cancel()
	if err := b.flush(); err != nil {
		return nil, err
	}
	resp, err := b.stream.CloseAndRecv()
	if err != nil {
		return nil, fromWorker(b.addr, err)
	}
	if int64(resp.Length) != b.n {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "worker stored %d bytes of %d", resp.Length, b.n)
	}
	return resp, nil
}

// streamErr turns a failed Send into the stream's real error: gRPC reports
// io.EOF from Send and the status from the receiving side.
func (b *blockStream) streamErr(err error) error {
	if _, rerr := b.stream.CloseAndRecv(); rerr != nil {
		return fromWorker(b.addr, rerr)
	}
	return fmt.Errorf("worker at %s closed the write stream: %w", b.addr, err)
}

// maxFlushTail bounds the tail a flush sends (the service keeps it in its
// log until a block covers it): a writer that wrote more since its last
// flush ends its block at the flush instead.
const maxFlushTail = 8 << 20

// committed drops the kept bytes a flush made visible up to length.
func (bs *blockSet) committed(length uint64) {
	if bs.cur == nil || length <= bs.keepStart {
		return
	}
	drop := min(uint64(len(bs.keep)), length-bs.keepStart)
	bs.keep = append(bs.keep[:0], bs.keep[drop:]...)
	bs.keepStart += drop
}

// pendingBlock is a finished block stream whose worker is uploading it.
type pendingBlock struct {
	stream blockSink
	done   chan struct{}
	block  *pb.Block
	err    error
}

// blockSet is a block-mode writer's content past the inline limit: the
// current block, streamed to a worker as it is written, and the blocks
// before it, finished, uploaded and not yet committed.
type blockSet struct {
	cur      blockSink
	curStart uint64 // file offset of the current block's first byte
	curLen   uint64 // bytes in the current block so far
	// keep holds the current block's bytes from keepStart, the last
	// flush's end, once the writer has flushed: the next flush sends them
	// as the file's tail. Past maxFlushTail it overflows and stops, and
	// the next flush ends the block instead.
	keep      []byte
	keepStart uint64
	overflow  bool
	flushed   bool
	pending   []*pendingBlock // in file order
	sem       chan struct{}   // one token per block in flight
	// failed closes when a block in flight fails: the writer stops then,
	// rather than stream blocks whose fate is sealed (with a bucket that
	// does not answer, each would wait out the worker's retry budget).
	failed   chan struct{}
	failOnce sync.Once
}

func newBlockSet() *blockSet {
	return &blockSet{sem: make(chan struct{}, blocksInFlight), failed: make(chan struct{})}
}

// failure returns the error of a block in flight that failed, if any.
func (bs *blockSet) failure() error {
	select {
	case <-bs.failed:
	default:
		return nil
	}
	for _, p := range bs.pending {
		select {
		case <-p.done:
			if p.err != nil {
				return p.err
			}
		default:
		}
	}
	return errors.New("a block in flight failed")
}

// renewToken asks the service for a new block access token with a flush
// that carries nothing: the service checks that the writer holds the file's
// lease, commits nothing new, and answers with a token. Each block opens
// its stream with the writer's token, and the worker refuses an expired
// one, so a file written for longer than a token lives (an hour) without a
// flush would fail at its next block. A failure leaves the old token,
// which the worker refuses once expired, saying so.
func (w *Writer) renewToken() {
	resp, err := call(func() (*pb.FlushResponse, error) {
		return w.c.meta.Flush(w.ctx, &pb.FlushRequest{Header: w.hdr, Path: w.path, InodeId: w.ino})
	})
	if err == nil {
		w.token.set(resp.BlockToken, resp.BlockTokenExpires)
	}
}

// streamBlocks writes p to the writer's blocks, which start at w.off.
func (w *Writer) streamBlocks(p []byte) error {
	bs := w.bl
	for len(p) > 0 {
		if bs.cur == nil {
			if err := bs.failure(); err != nil {
				return err
			}
			if w.token.due() {
				w.renewToken()
			}
			s, err := w.openBlock()
			if err != nil {
				return err
			}
			bs.cur, bs.curStart, bs.curLen = s, w.off, 0
			bs.keep, bs.keepStart, bs.overflow = bs.keep[:0], w.off, false
		}
		n := min(uint64(len(p)), w.blockSize-bs.curLen)
		if err := bs.cur.write(p[:n]); err != nil {
			return err
		}
		if bs.flushed && !bs.overflow {
			bs.overflow = uint64(len(bs.keep))+n > maxFlushTail
			if !bs.overflow {
				bs.keep = append(bs.keep, p[:n]...)
			}
		}
		bs.curLen += n
		w.off += n
		p = p[n:]
		if bs.curLen == w.blockSize {
			w.endBlock()
		}
	}
	return nil
}

// endBlock finishes the current block's stream; the worker's answer comes
// in the background, with at most blocksInFlight blocks awaited at once.
func (w *Writer) endBlock() {
	bs := w.bl
	if bs.cur == nil {
		return
	}
	s, start := bs.cur, bs.curStart
	bs.cur = nil
	p := &pendingBlock{stream: s, done: make(chan struct{})}
	bs.pending = append(bs.pending, p)
	select {
	case bs.sem <- struct{}{}:
	case <-bs.failed:
		s.cancel()
		p.err = bs.failure()
		close(p.done)
		return
	}
	go func() {
		resp, err := s.finish()
		switch {
		case err != nil:
			p.err = err
		case len(resp.Blocks) != 1:
			p.err = fmt.Errorf("worker made %d blocks of one block's stream", len(resp.Blocks))
		default:
			p.block = resp.Blocks[0]
			p.block.Offset = start
		}
		<-bs.sem
		close(p.done)
		if p.err != nil {
			bs.failOnce.Do(func() { close(bs.failed) })
		}
	}()
}

// finished waits for the blocks in flight and returns them, in order, no
// longer pending.
func (w *Writer) finished() ([]*pb.Block, error) {
	bs := w.bl
	var out []*pb.Block
	var errs []error
	for _, p := range bs.pending {
		<-p.done
		if p.err != nil {
			errs = append(errs, p.err)
			continue
		}
		out = append(out, p.block)
	}
	bs.pending = nil
	return out, errors.Join(errs...)
}

// cancelBlocks abandons the streams of a failed write.
func (w *Writer) cancelBlocks() {
	if w.bl == nil {
		return
	}
	if w.bl.cur != nil {
		w.bl.cur.cancel()
	}
	for _, p := range w.bl.pending {
		p.stream.cancel() // the worker stops uploading
	}
	_, _ = w.finished()
}
