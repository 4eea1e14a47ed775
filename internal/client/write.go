package client

import (
	"context"
	"errors"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// sendChunk is the size of one message of a write stream.
const sendChunk = 1 << 20

// blockStream is a write in progress to a worker, past the inline limit.
type blockStream struct {
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
				StoreUri: w.storeURI, InodeId: w.ino, BlockSize: w.blockSize, Path: w.path, ObjectKey: w.objectKey}}})
		}
		if err != nil {
			cancel()
			lastErr = err
			continue
		}
		w.bs = &blockStream{stream: stream, cancel: cancel, chunk: make([]byte, 0, sendChunk)}
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
		return streamErr(b.stream, err)
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
		return nil, rpcerr.FromStatus(err)
	}
	if int64(resp.Length) != b.n {
		return nil, fserr.Errorf(fserr.ErrInvalidArgument, "worker stored %d bytes of %d", resp.Length, b.n)
	}
	return resp, nil
}

// streamErr turns a failed Send into the stream's real error: gRPC reports
// io.EOF from Send and the status from the receiving side.
func streamErr(stream pb.WorkerService_WriteClient, err error) error {
	if _, rerr := stream.CloseAndRecv(); rerr != nil {
		return rpcerr.FromStatus(rerr)
	}
	return errors.Join(err, errors.New("worker closed the write stream"))
}
