package client

import (
	"context"
	"fmt"

	"github.com/stratafs/strata/internal/fserr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// sendChunk is the size of one message of a write stream.
const sendChunk = 1 << 20

// blockStream is a write in progress to a worker, past the inline limit.
type blockStream struct {
	addr   string // the worker's
	stream pb.WorkerService_WriteClient
	cancel context.CancelFunc
	chunk  []byte
	n      int64
}

// openStream starts streaming the file to a worker, beginning with what
// was buffered so far.
func (w *Writer) openStream() error {
	list, err := w.c.workers.live(w.ctx, false)
	if err != nil {
		return err
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
			err = stream.Send(&pb.WriteRequest{Msg: &pb.WriteRequest_Header{Header: &pb.WriteHeader{
				StoreUri: w.storeURI, InodeId: w.ino, BlockSize: w.blockSize, Path: w.path}}})
		}
		if err != nil {
			cancel()
			lastErr = fromWorker(wk.Address, err)
			continue
		}
		w.bs = &blockStream{addr: wk.Address, stream: stream, cancel: cancel, chunk: make([]byte, 0, sendChunk)}
		return w.bs.write(w.buf.Bytes())
	}
	return lastErr
}

func (b *blockStream) write(p []byte) error {
	for len(p) > 0 {
		n := min(len(p), sendChunk-len(b.chunk))
		b.chunk, p = append(b.chunk, p[:n]...), p[n:]
		if len(b.chunk) == sendChunk {
			if err := b.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *blockStream) flush() error {
	if len(b.chunk) == 0 {
		return nil
	}
	if err := b.stream.Send(&pb.WriteRequest{Msg: &pb.WriteRequest_Data{Data: b.chunk}}); err != nil {
		return b.streamErr(err)
	}
	b.n += int64(len(b.chunk))
	b.chunk = b.chunk[:0]
	return nil
}

// finish ends the stream and returns the blocks the worker made.
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
