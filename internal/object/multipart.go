package object

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// Multipart limits shared by every MultipartStore; they are S3's.
const (
	MinPartSize = 5 << 20 // every part but the last is at least this long
	MaxParts    = 10000   // part numbers run from 1 to MaxParts
)

// MultipartStore is a Store that can also assemble an object from parts
// uploaded independently and in parallel (S3 multipart upload). It is an
// optional ability (as io/fs's ReadFileFS is): use PutParallel, which falls
// back to Put for stores without it.
//
// Nothing of an upload is visible under its key before CompleteMultipart,
// which makes the whole object visible at once. Uploads that are neither
// completed nor aborted keep their parts stored until the backend sweeps them.
type MultipartStore interface {
	Store

	// CreateMultipart starts an upload to key.
	CreateMultipart(ctx context.Context, key string) (Upload, error)

	// UploadPart stores part num (1..MaxParts) of exactly size bytes from r.
	// Every part but the last must be at least MinPartSize. Uploading a num
	// again replaces that part, so UploadPart is idempotent.
	UploadPart(ctx context.Context, u Upload, num int, r io.Reader, size int64) (Part, error)

	// CompleteMultipart makes the object under u.Key the concatenation of
	// parts, which are in ascending Num order, and ends the upload. An upload
	// that is unknown (never created, aborted or already completed) fails
	// with ErrNotFound.
	CompleteMultipart(ctx context.Context, u Upload, parts []Part) error

	// AbortMultipart ends the upload and discards its parts. An unknown
	// upload is not an error, so AbortMultipart is idempotent.
	AbortMultipart(ctx context.Context, u Upload) error
}

// Upload identifies one multipart upload.
type Upload struct {
	Key string
	ID  string // the backend's upload id
}

// Part is an uploaded part, as CompleteMultipart needs it back.
type Part struct {
	Num  int
	ETag string // the backend's tag for the part's content
	Size int64
}

// ParallelOptions tunes PutParallel; the zero value is sensible.
type ParallelOptions struct {
	PartSize    int64 // default 16 MiB, raised to MinPartSize and to fit MaxParts
	Concurrency int   // parts in flight at once; default 4
}

// abortTimeout bounds the cleanup of a failed upload, which runs even after
// the caller's context is done.
const abortTimeout = 30 * time.Second

// PutParallel stores size bytes of r under key with the Put contract. If s is
// a MultipartStore and the object spans more than one part, it uploads parts
// in parallel and completes them; otherwise it is a single Put. A failed
// multipart upload is aborted.
func PutParallel(ctx context.Context, s Store, key string, r io.ReaderAt, size int64, o ParallelOptions) error {
	partSize, conc := o.resolve(size)
	ms, ok := s.(MultipartStore)
	if !ok || size <= partSize {
		return s.Put(ctx, key, io.NewSectionReader(r, 0, size), size)
	}
	u, err := ms.CreateMultipart(ctx, key)
	if err != nil {
		return err
	}
	parts, err := uploadParts(ctx, ms, u, r, size, partSize, conc)
	if err == nil {
		err = ms.CompleteMultipart(ctx, u, parts)
	}
	if err != nil {
		// NB: abort on a context of its own, so that a cancelled put does not
		// leave its parts behind.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		return errors.Join(err, ms.AbortMultipart(actx, u))
	}
	return nil
}

func (o ParallelOptions) resolve(size int64) (partSize int64, concurrency int) {
	partSize, concurrency = o.PartSize, o.Concurrency
	if partSize <= 0 {
		partSize = 16 << 20
	}
	partSize = max(partSize, MinPartSize, (size+MaxParts-1)/MaxParts)
	if concurrency <= 0 {
		concurrency = 4
	}
	return partSize, concurrency
}

// uploadParts uploads the parts of r with conc workers; the first failure
// cancels the rest.
func uploadParts(ctx context.Context, ms MultipartStore, u Upload, r io.ReaderAt, size, partSize int64, conc int) ([]Part, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	n := int((size + partSize - 1) / partSize)
	parts := make([]Part, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(conc, n) {
		wg.Go(func() {
			for i := range next {
				off := int64(i) * partSize
				sz := min(partSize, size-off)
				p, err := ms.UploadPart(ctx, u, i+1, io.NewSectionReader(r, off, sz), sz)
				if err != nil {
					cancel(err)
					return
				}
				parts[i] = p
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return parts, nil
}
