package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// WriterOptions tunes a Writer; the zero value is sensible.
type WriterOptions struct {
	// PartSize is the size of every part but the last; default 16 MiB,
	// raised to MinPartSize. It doubles after every partsPerSize parts, so
	// that a stream of unknown length never runs out of part numbers (16
	// MiB parts reach 16 GiB at part 1000 and 16 TiB by part 10000).
	PartSize int64
	// Concurrency is the number of parts uploading at once; default 4. A
	// Write waits while that many are in flight and another part is full,
	// so a Writer holds at most Concurrency+1 parts in memory.
	Concurrency int
	// Abandon, if set, takes a failed or aborted upload to abort later
	// instead of Close and Abort aborting it before they return (see
	// ParallelOptions.Abandon).
	Abandon func(Upload)
}

// partsPerSize is how many parts a Writer uploads before doubling PartSize.
const partsPerSize = 1000

// errClosed is what a Writer's calls return after Close or Abort.
var errClosed = errors.New("object: Writer already closed or aborted")

// Writer writes one object from a stream whose length is not known in
// advance: what a worker uses to store a file as one object while its client
// is still writing. Write buffers a part; once a part is full and more bytes
// come, the upload starts (CreateMultipart) and full parts are uploaded in
// the background. Close completes the object; a stream that fits in one part
// (an empty one included) is a single Put instead.
//
// Nothing is visible under the key before Close succeeds, and then all of it
// is. A Close that fails, and Abort, abort the upload, so that no parts are
// left behind; a Writer that is neither closed nor aborted (its process
// died) leaves its upload to be found by ListUploads and aborted.
//
// A Writer is not safe for concurrent use. Cancelling its context fails the
// uploads in flight and every later call; Abort still cleans up.
type Writer struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	s        Store
	key      string
	partSize int64
	sem      chan struct{} // one token per part in flight
	abandon  func(Upload)

	buf    []byte  // the part being filled
	upload *Upload // nil until a second part begins
	nparts int     // parts handed to uploads so far
	wg     sync.WaitGroup
	closed bool
	info   Info
	mu     struct {
		sync.Mutex
		parts []Part
		free  [][]byte // buffers of finished parts, for reuse
	}
}

// NewWriter returns a Writer of the object key in s. Nothing is sent before
// the first part is full.
func NewWriter(ctx context.Context, s Store, key string, o WriterOptions) *Writer {
	ctx, cancel := context.WithCancelCause(ctx)
	size, conc := o.PartSize, o.Concurrency
	if size <= 0 {
		size = 16 << 20
	}
	if conc <= 0 {
		conc = 4
	}
	return &Writer{ctx: ctx, cancel: cancel, s: s, key: key, partSize: max(size, MinPartSize),
		sem: make(chan struct{}, conc), abandon: o.Abandon}
}

// Write buffers p, uploading the parts it fills. It fails once any upload
// has failed, with that failure; the object will not be written then.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, WrapError(OpPut, w.key, errClosed)
	}
	written := 0
	for len(p) > 0 {
		if err := w.failure(); err != nil {
			return written, err
		}
		if int64(len(w.buf)) == w.partSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
		n := min(int64(len(p)), w.partSize-int64(len(w.buf)))
		w.buf = append(w.buf, p[:n]...)
		p, written = p[n:], written+int(n)
	}
	return written, nil
}

// failure returns the first failure of an upload, or the context's end.
func (w *Writer) failure() error {
	if w.ctx.Err() == nil {
		return nil
	}
	return WrapError(OpUploadPart, w.key, context.Cause(w.ctx))
}

// flush hands the full buffer to an upload of its own, starting the
// multipart upload if this is the first part.
func (w *Writer) flush() error {
	if w.upload == nil {
		u, err := w.s.CreateMultipart(w.ctx, w.key)
		if err != nil {
			w.cancel(err)
			return err
		}
		w.upload = &u
	}
	num := w.nparts + 1
	if num > MaxParts {
		err := WrapError(OpUploadPart, w.key, fmt.Errorf("more than %d parts", MaxParts))
		w.cancel(err)
		return err
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		return w.failure()
	}
	w.nparts = num
	part := w.buf
	w.buf = w.newBuffer(num)
	w.wg.Go(func() { w.uploadPart(num, part) })
	return nil
}

// newBuffer returns an empty buffer for the part after num, of the size that
// part will have.
func (w *Writer) newBuffer(num int) []byte {
	if num%partsPerSize == 0 {
		w.partSize *= 2
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.mu.free) > 0 {
		b := w.mu.free[len(w.mu.free)-1]
		w.mu.free = w.mu.free[:len(w.mu.free)-1]
		if int64(cap(b)) >= w.partSize {
			return b[:0]
		}
	}
	return make([]byte, 0, w.partSize)
}

// uploadPart runs in the background; its failure cancels the Writer's
// context, which stops the other uploads and fails the caller's next call.
func (w *Writer) uploadPart(num int, data []byte) {
	defer func() { <-w.sem }()
	p, err := w.s.UploadPart(w.ctx, *w.upload, num, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		w.cancel(err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mu.parts = append(w.mu.parts, p)
	w.mu.free = append(w.mu.free, data)
}

// Close writes what is buffered, waits for the uploads and completes the
// object. If anything failed, it aborts the upload and returns the first
// failure; the object is then untouched. Later calls return errClosed.
func (w *Writer) Close() error {
	if w.closed {
		return WrapError(OpCompleteMultipart, w.key, errClosed)
	}
	w.closed = true
	defer w.cancel(errClosed)
	err := w.failure()
	switch {
	case err == nil && w.upload == nil:
		w.info, err = w.s.Put(w.ctx, w.key, bytes.NewReader(w.buf), int64(len(w.buf)))
		return err
	case err == nil:
		err = w.complete()
	}
	if err != nil && w.upload != nil {
		w.cancel(err)
		w.wg.Wait()
		err = errors.Join(err, w.abortUpload())
	}
	return err
}

// abortUpload aborts the upload, or hands it to Abandon.
func (w *Writer) abortUpload() error {
	if w.abandon != nil {
		w.abandon(*w.upload)
		return nil
	}
	return AbortUpload(w.ctx, w.s, *w.upload)
}

func (w *Writer) complete() error {
	if len(w.buf) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.wg.Wait()
	if err := w.failure(); err != nil {
		return err
	}
	w.mu.Lock()
	parts := slices.SortedFunc(slices.Values(w.mu.parts), func(a, b Part) int { return a.Num - b.Num })
	w.mu.Unlock()
	info, err := w.s.CompleteMultipart(w.ctx, *w.upload, parts)
	w.info = info
	return err
}

// Info returns the written object's Info, once Close has succeeded.
func (w *Writer) Info() Info { return w.info }

// Abort stops the uploads, discards what was written and aborts the
// multipart upload if one was started, so nothing is left behind. It is
// idempotent, and does nothing after a Close (which aborts by itself when
// it fails; after one that succeeded, the object stays).
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.cancel(errClosed)
	w.wg.Wait()
	w.buf = nil
	if w.upload == nil {
		return nil
	}
	return w.abortUpload()
}
