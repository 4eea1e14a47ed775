package worker

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stratafs/strata/internal/blocks"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/trace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Cache mode: a file is one object at the key of its path, written whole
// by writeObject and read as blocks that are ranges of one version of it
// (objectReader).

// writeObject writes the stream as the one object h.ObjectKey, in parts
// uploaded while the client still streams (object.Writer), and answers
// with the object's version once it is complete. A stream that breaks
// aborts the upload: no object, and no parts left behind. Nothing is
// cached: the object's blocks get their ids from its version, which is
// known only at the end (a reader caches them on its first read).
func (w *Worker) writeObject(stream pb.WorkerService_WriteServer, h *pb.WriteHeader) error {
	if err := object.ValidateKey(h.ObjectKey); err != nil || object.IsMarker(h.ObjectKey) {
		return fserr.Errorf(fserr.ErrInvalidArgument, "write: %q cannot be an object's key", h.ObjectKey)
	}
	store, err := w.stores.Get(stream.Context(), h.StoreUri)
	if err != nil {
		return err
	}
	ow := object.NewWriter(stream.Context(), store, h.ObjectKey, object.WriterOptions{Concurrency: w.cfg.UploadConcurrency,
		Abandon: w.abandon(store)})
	total, err := copyStream(ow, stream)
	if err == nil {
		err = ow.Close()
	}
	if err != nil {
		if aerr := ow.Abort(); aerr != nil {
			w.cfg.Log.Warn("aborting an object write failed", "key", h.ObjectKey, "err", aerr)
		}
		w.cfg.Log.Warn("object write failed", "path", h.Path, "key", h.ObjectKey, "trace", trace.Incoming(stream.Context()), "err", err)
		return bucketErr(err)
	}
	w.stats.bucketBytesWritten.Add(uint64(total))
	return stream.SendAndClose(&pb.WriteResponse{Length: uint64(total), Etag: ow.Info().ETag})
}

// copyStream writes the data messages of stream to dst until the client
// closes its side.
func copyStream(dst io.Writer, stream pb.WorkerService_WriteServer) (int64, error) {
	var total int64
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, err := dst.Write(msg.GetData())
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// openBlock opens the range [off, off+n) of the block ref names in store:
// its own object in block mode, or the range of one version of the file's
// object in cache mode (another version fails with ErrChanged: it is never
// read, let alone cached, as this block).
func openBlock(ctx context.Context, store object.Store, ref *pb.BlockRef, off, n int64) (io.ReadCloser, string, error) {
	if ref.ObjectKey == "" {
		key := blocks.ObjectKey(ref.InodeId, ref.BlockId)
		rc, err := store.Get(ctx, key, off, n)
		if errors.Is(err, object.ErrNotFound) {
			err = fserr.Errorf(fserr.ErrNotFound, "read: block %s is missing from the bucket", key)
		}
		return rc, key, err
	}
	rc, err := store.GetVersion(ctx, ref.ObjectKey, ref.Version, int64(ref.ObjectOffset)+off, n)
	switch {
	case errors.Is(err, object.ErrChanged):
		err = fserr.Errorf(fserr.ErrChanged, "read: %s changed in the bucket since it was opened (version %s): open it again", ref.ObjectKey, ref.Version)
	case errors.Is(err, object.ErrNotFound):
		err = fserr.Errorf(fserr.ErrNotFound, "read: %s is missing from the bucket", ref.ObjectKey)
	}
	return rc, ref.ObjectKey, err
}

// changed translates a read that a changed object ended midway.
func changed(ref *pb.BlockRef, key string, off int64, err error) error {
	if errors.Is(err, object.ErrChanged) {
		return fserr.Errorf(fserr.ErrChanged, "read: %s changed in the bucket while it was read (version %s): open it again", key, ref.Version)
	}
	return fmt.Errorf("read %s at %d: %w", key, off, err)
}

// Load implements WorkerService: it brings whole blocks into the cache,
// fetching only the pages missing, so that a load run again after it
// stopped costs little for what it did.
func (w *Worker) Load(ctx context.Context, r *pb.LoadRequest) (*pb.LoadResponse, error) {
	resp := &pb.LoadResponse{}
	for _, ref := range r.GetBlocks() {
		if err := checkRange(ref, 0, ref.GetLength()); err != nil {
			return nil, err
		}
		policy, err := w.authorizeRef(ctx, ref, blocktoken.Cache)
		if err != nil {
			return nil, err
		}
		had := w.cachedBytes(ref)
		held, _, err := w.ensureCached(ctx, ref, 0, int64(ref.Length), false)
		if err != nil {
			return nil, err
		}
		if len(held) > 0 {
			return nil, fmt.Errorf("load: the cache could not store block %016x (see the worker's log)", ref.BlockId)
		}
		w.pin(blocks.CacheKey(ref.InodeId, ref.BlockId), policy)
		resp.Fetched += ref.Length - had
		resp.Cached += had
	}
	return resp, nil
}

// Uncache implements WorkerService.
func (w *Worker) Uncache(ctx context.Context, r *pb.UncacheRequest) (*pb.UncacheResponse, error) {
	resp := &pb.UncacheResponse{}
	for _, ref := range r.GetBlocks() {
		if _, err := w.authorizeRef(ctx, ref, blocktoken.Cache); err != nil {
			return nil, err
		}
		if w.cachedBytes(ref) > 0 {
			w.cache.Drop(blocks.CacheKey(ref.GetInodeId(), ref.GetBlockId()))
			resp.Dropped++
		}
	}
	return resp, nil
}

// Cached implements WorkerService.
func (w *Worker) Cached(ctx context.Context, r *pb.CachedRequest) (*pb.CachedResponse, error) {
	resp := &pb.CachedResponse{Bytes: make([]uint64, len(r.GetBlocks()))}
	for i, ref := range r.GetBlocks() {
		if _, err := w.authorizeRef(ctx, ref, blocktoken.Read); err != nil {
			return nil, err
		}
		resp.Bytes[i] = w.cachedBytes(ref)
	}
	return resp, nil
}

// cachedBytes is how many bytes of the block ref names the cache holds.
func (w *Worker) cachedBytes(ref *pb.BlockRef) uint64 {
	n := int64(ref.GetLength())
	if n == 0 {
		return 0
	}
	var missing int64
	for _, r := range w.cache.Missing(blocks.CacheKey(ref.GetInodeId(), ref.GetBlockId()), 0, n) {
		missing += max(0, min(r.Off+r.Len, n)-r.Off)
	}
	return uint64(n - missing)
}
