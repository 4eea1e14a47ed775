package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Write implements WorkerService: it cuts the stream into blocks of the
// requested size, uploads up to UploadConcurrency of them at a time, caches
// each one, and answers with the block list once all are in the bucket. A
// bucket that streams (object.Streamer: a file:// bucket) takes each block
// as its bytes arrive, so that what is left at the block's end is its fsync
// and rename; into any other the block goes whole once received. A failed
// write leaves objects no file refers to; the namespace service removes them
// when the writer's lease ends.
func (w *Worker) Write(stream pb.WorkerService_WriteServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := first.GetHeader()
	if h == nil || h.InodeId == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "write: the first message must be a header with an inode")
	}
	uri, err := w.authorize(stream.Context(), access{mode: blocktoken.Write, namespace: h.Namespace, inode: h.InodeId,
		object: h.ObjectKey, storeURI: h.StoreUri, token: h.BlockToken})
	if err != nil {
		return err
	}
	h.StoreUri = uri
	if h.ObjectKey != "" {
		return w.writeObject(stream, h)
	}
	// The file's block size, from its create: the service chose it.
	if err := blocks.CheckSize(h.BlockSize); err != nil {
		return fserr.Errorf(fserr.ErrInvalidArgument, "write: %v", err)
	}
	size := int64(h.BlockSize)
	store, err := w.stores.Get(stream.Context(), h.StoreUri)
	if err != nil {
		return err
	}
	up := newUploader(stream.Context(), w, store, h.InodeId, w.cfg.UploadConcurrency)
	var sink blockSink = &wholeBlocks{up: up, size: size}
	if object.Streams(store) {
		sink = &streamedBlocks{up: up, size: size}
	}
	total, err := w.cut(stream, size, sink)
	if err == nil {
		err = up.wait()
	} else {
		sink.abort()
		up.abort()
	}
	if err != nil {
		w.cfg.Log.Warn("write failed", "path", h.Path, "inode", h.InodeId, "err", err)
		return err
	}
	return stream.SendAndClose(&pb.WriteResponse{Blocks: up.blocks, Length: uint64(total)})
}

// blockSink takes a write's blocks as cut reads them.
type blockSink interface {
	// data takes the next bytes of the current block, which starts with
	// the first call after an end.
	data(p []byte) error
	// end ends the current block, which is off bytes into the file.
	end(off int64) error
	// abort drops the current block, if any, after a failed write.
	abort()
}

// cut reads the stream into blocks of size bytes and hands them to sink,
// each full block and the last partial one.
func (w *Worker) cut(stream pb.WorkerService_WriteServer, size int64, sink blockSink) (int64, error) {
	var off, n int64 // n: bytes of the current block
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		data := msg.GetData()
		for len(data) > 0 {
			k := min(int64(len(data)), size-n)
			if err := sink.data(data[:k]); err != nil {
				return 0, err
			}
			data, n = data[k:], n+k
			if n == size {
				if err := sink.end(off); err != nil {
					return 0, err
				}
				off, n = off+size, 0
			}
		}
	}
	if n > 0 {
		if err := sink.end(off); err != nil {
			return 0, err
		}
	}
	return off + n, nil
}

// blockBuf returns an empty buffer for a block of size bytes. It starts
// small, so that a small file costs little however large its block size,
// and grow takes the whole block at once past that: grown by doubling, a
// 64 MiB block would be copied once more (56 MiB).
func blockBuf(size int64) []byte { return make([]byte, 0, min(size, 8<<20)) }

// grow appends p to buf, a block of size bytes.
func grow(buf, p []byte, size int64) []byte {
	if len(buf)+len(p) > cap(buf) {
		buf = append(make([]byte, 0, size), buf...)
	}
	return append(buf, p...)
}

// fullBufs keeps the buffers of streamed blocks that filled their block
// size, for the next blocks of that size: a 64 MiB buffer allocated afresh
// is faulted in and cleared page by page, a tenth of the worker's CPU in a
// large write. (Not whole blocks': a failed attempt of a retried Put to a
// remote bucket may read its body still after the Put returned.)
var fullBufs blockBufs

// blockBufs is a pool of block buffers.
type blockBufs struct{ p sync.Pool }

// get returns an empty buffer for a block of size bytes: a kept one if it
// has the capacity, else blockBuf's.
func (b *blockBufs) get(size int64) []byte {
	if v, ok := b.p.Get().(*[]byte); ok && int64(cap(*v)) == size {
		return (*v)[:0]
	}
	return blockBuf(size)
}

// put keeps buf, the buffer of a block of size bytes, if it holds a whole
// one; the caller no longer uses it.
func (b *blockBufs) put(buf []byte, size int64) {
	if int64(cap(buf)) == size {
		b.p.Put(&buf)
	}
}

// wholeBlocks uploads each block whole once it is received.
type wholeBlocks struct {
	up   *uploader
	size int64
	buf  []byte
}

func (b *wholeBlocks) data(p []byte) error {
	if b.buf == nil {
		b.buf = blockBuf(b.size)
	}
	b.buf = grow(b.buf, p, b.size)
	return nil
}

func (b *wholeBlocks) end(off int64) error {
	data := b.buf
	b.buf = nil
	if err := b.up.acquire(); err != nil {
		return err
	}
	b.up.run(blocks.NewID(), off, data, func(id uint64) error { return b.up.put(id, data) })
	return nil
}

func (b *wholeBlocks) abort() {}

// streamedBlocks writes each block into the bucket as its bytes arrive, and
// keeps them for the cache; the block's slot among the uploads in flight is
// taken at its first byte.
type streamedBlocks struct {
	up   *uploader
	size int64
	id   uint64
	ps   object.PutStream // nil between blocks
	buf  []byte
}

func (b *streamedBlocks) data(p []byte) error {
	if b.ps == nil {
		if err := b.up.acquire(); err != nil {
			return err
		}
		b.id = blocks.NewID()
		key := blocks.ObjectKey(b.up.inode, b.id)
		ps, _, err := object.StartPut(b.up.ctx, b.up.store, key)
		if err != nil {
			b.up.release()
			return bucketErr(fmt.Errorf("upload block %s: %w", key, err))
		}
		b.ps, b.buf = ps, fullBufs.get(b.size)
	}
	if _, err := b.ps.Write(p); err != nil {
		return bucketErr(fmt.Errorf("upload block %s: %w", blocks.ObjectKey(b.up.inode, b.id), err))
	}
	b.buf = grow(b.buf, p, b.size)
	return nil
}

func (b *streamedBlocks) end(off int64) error {
	ps, data := b.ps, b.buf
	b.ps, b.buf = nil, nil
	b.up.run(b.id, off, data, func(id uint64) error {
		key := blocks.ObjectKey(b.up.inode, id)
		if _, err := ps.Commit(b.up.ctx); err != nil {
			return bucketErr(fmt.Errorf("upload block %s: %w", key, err))
		}
		b.up.stored(id, data)
		fullBufs.put(data, b.size)
		return nil
	})
	return nil
}

func (b *streamedBlocks) abort() {
	if b.ps != nil {
		b.ps.Abort()
		fullBufs.put(b.buf, b.size)
		b.ps, b.buf = nil, nil
		b.up.release()
	}
}

// uploader puts blocks into the bucket with bounded concurrency; the first
// failure cancels the rest.
type uploader struct {
	ctx    context.Context
	cancel context.CancelFunc
	w      *Worker
	store  object.Store
	inode  uint64
	sem    chan struct{}
	wg     sync.WaitGroup
	blocks []*pb.Block
	mu     struct {
		sync.Mutex
		err error
	}
}

func newUploader(ctx context.Context, w *Worker, store object.Store, inode uint64, concurrency int) *uploader {
	ctx, cancel := context.WithCancel(ctx)
	return &uploader{ctx: ctx, cancel: cancel, w: w, store: store, inode: inode, sem: make(chan struct{}, concurrency)}
}

// acquire takes a slot among the UploadConcurrency blocks in flight,
// which bound the memory a write holds: it waits while none is free, and
// fails once an upload failed.
func (u *uploader) acquire() error {
	select {
	case u.sem <- struct{}{}:
		return nil
	case <-u.ctx.Done():
		return u.err()
	}
}

// release gives back a slot that acquire took and run did not.
func (u *uploader) release() { <-u.sem }

// run records data as the block id at offset and has upload store it in
// the background, in the slot acquire took.
func (u *uploader) run(id uint64, offset int64, data []byte, upload func(id uint64) error) {
	u.blocks = append(u.blocks, &pb.Block{BlockId: id, Offset: uint64(offset), Length: uint64(len(data))})
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer u.release()
		if err := upload(id); err != nil {
			u.fail(err)
		}
	}()
}

// put uploads data whole as the block id.
func (u *uploader) put(id uint64, data []byte) error {
	key := blocks.ObjectKey(u.inode, id)
	err := object.PutParallel(u.ctx, u.store, key, bytes.NewReader(data), int64(len(data)),
		object.ParallelOptions{Abandon: u.w.abandon(u.store)})
	if err != nil {
		return bucketErr(fmt.Errorf("upload block %s: %w", key, err))
	}
	u.stored(id, data)
	return nil
}

// stored counts the block id, data, as in the bucket, and caches it.
func (u *uploader) stored(id uint64, data []byte) {
	u.w.stats.bucketBytesWritten.Add(uint64(len(data)))
	u.w.stats.blocksWritten.Add(1)
	// Caching is best effort: the block is safe in the bucket already.
	if err := u.w.cache.Put(blocks.CacheKey(u.inode, id), 0, data); err != nil {
		u.w.cacheFailed(blocks.CacheKey(u.inode, id), err)
	}
}

func (u *uploader) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.mu.err == nil {
		u.mu.err = err
		u.cancel()
	}
}

func (u *uploader) err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.mu.err != nil {
		return u.mu.err
	}
	return u.ctx.Err()
}

// wait returns once every upload finished, with the first error.
func (u *uploader) wait() error {
	u.wg.Wait()
	defer u.cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.mu.err
}

func (u *uploader) abort() {
	u.fail(context.Canceled)
	u.wg.Wait()
}
