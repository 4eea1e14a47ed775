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
	"github.com/stratafs/strata/internal/storagepolicy"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Write implements WorkerService: it cuts the stream into blocks of the
// requested size, uploads up to UploadConcurrency of them at a time, caches
// each one, and answers with the block list once all are in the bucket. A
// failed write leaves objects no file refers to; the namespace service
// removes them when the writer's lease ends.
func (w *Worker) Write(stream pb.WorkerService_WriteServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := first.GetHeader()
	if h == nil || h.InodeId == 0 {
		return fserr.Errorf(fserr.ErrInvalidArgument, "write: the first message must be a header with an inode")
	}
	g, err := w.authorize(stream.Context(), access{mode: blocktoken.Write, namespace: h.Namespace, inode: h.InodeId,
		object: h.ObjectKey, storeURI: h.StoreUri, token: h.BlockToken})
	if err != nil {
		return err
	}
	h.StoreUri = g.uri
	if h.ObjectKey != "" {
		return w.writeObject(stream, h)
	}
	// The file's block size, from its create: the service chose it.
	if err := blocks.CheckSize(h.BlockSize); err != nil {
		return fserr.Errorf(fserr.ErrInvalidArgument, "write: %v", err)
	}
	size := int64(h.BlockSize)
	store, err := w.storeFor(stream.Context(), h.StoreUri, g.policy)
	if err != nil {
		return err
	}
	up := newUploader(stream.Context(), w, store, h.InodeId, w.cfg.UploadConcurrency)
	up.policy = g.policy
	total, err := w.cut(stream, size, up.add)
	if err == nil {
		err = up.wait()
	} else {
		up.abort()
	}
	if err != nil {
		w.cfg.Log.Warn("write failed", "path", h.Path, "inode", h.InodeId, "trace", trace.Incoming(stream.Context()), "err", err)
		return err
	}
	return stream.SendAndClose(&pb.WriteResponse{Blocks: up.blocks, Length: uint64(total)})
}

// cut reads the stream into blocks of size bytes and hands each full block,
// and the last partial one, to emit.
func (w *Worker) cut(stream pb.WorkerService_WriteServer, size int64, emit func(offset int64, data []byte) error) (int64, error) {
	// A buffer starts small, so that a small file costs little however
	// large its block size, and past that takes the whole block at once:
	// grown by doubling, a 64 MiB block would be copied once more (56 MiB).
	initial := min(size, 8<<20)
	buf := make([]byte, 0, initial)
	var off int64
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
			n := min(int64(len(data)), size-int64(len(buf)))
			if int64(len(buf))+n > int64(cap(buf)) {
				buf = append(make([]byte, 0, size), buf...)
			}
			buf, data = append(buf, data[:n]...), data[n:]
			if int64(len(buf)) == size {
				if err := emit(off, buf); err != nil {
					return 0, err
				}
				off += size
				buf = make([]byte, 0, initial)
			}
		}
	}
	if len(buf) > 0 {
		if err := emit(off, buf); err != nil {
			return 0, err
		}
		off += int64(len(buf))
	}
	return off, nil
}

// uploader puts blocks into the bucket with bounded concurrency; the first
// failure cancels the rest.
type uploader struct {
	ctx    context.Context
	cancel context.CancelFunc
	w      *Worker
	store  object.Store
	inode  uint64
	policy storagepolicy.Policy // what becomes of a block in the cache
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

// add starts uploading data as the block at offset; it waits while
// UploadConcurrency uploads are in flight, which bounds the memory a write
// holds, and fails once an upload failed.
func (u *uploader) add(offset int64, data []byte) error {
	select {
	case u.sem <- struct{}{}:
	case <-u.ctx.Done():
		return u.err()
	}
	id := blocks.NewID()
	u.blocks = append(u.blocks, &pb.Block{BlockId: id, Offset: uint64(offset), Length: uint64(len(data))})
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer func() { <-u.sem }()
		if err := u.put(id, data); err != nil {
			u.fail(err)
		}
	}()
	return nil
}

func (u *uploader) put(id uint64, data []byte) error {
	if err := u.w.uploadBlock(u.ctx, u.store, u.inode, id, bytes.NewReader(data), int64(len(data))); err != nil {
		return err
	}
	if u.policy.NoCache {
		return nil
	}
	// Caching is best effort: the block is safe in the bucket already.
	key := blocks.CacheKey(u.inode, id)
	if err := u.w.cache.Put(key, 0, data); err != nil {
		u.w.cacheFailed(key, err)
		return nil
	}
	u.w.pin(key, u.policy)
	return nil
}

// uploadBlock puts n bytes of r into store as block id of inode, and
// counts it.
func (w *Worker) uploadBlock(ctx context.Context, store object.Store, inode, id uint64, r io.ReaderAt, n int64) error {
	key := blocks.ObjectKey(inode, id)
	err := object.PutParallel(ctx, store, key, r, n, object.ParallelOptions{Abandon: w.abandon(store)})
	if err != nil {
		return bucketErr(fmt.Errorf("upload block %s: %w", key, err))
	}
	w.stats.bucketBytesWritten.Add(uint64(n))
	w.stats.blocksWritten.Add(1)
	return nil
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
