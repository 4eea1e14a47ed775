package object

import (
	"cmp"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"
)

// Multipart limits shared by every Store; they are S3's.
const (
	MinPartSize = 5 << 20 // every part but the last is at least this long
	MaxParts    = 10000   // part numbers run from 1 to MaxParts
)

// Upload identifies one multipart upload.
type Upload struct {
	Key     string
	ID      string    // the backend's upload id
	Started time.Time // when it was created, by the store's clock
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
	// Abandon, if set, takes a failed upload to abort later instead of
	// PutParallel aborting it before it returns: a store that does not
	// answer would hold the caller's error back for the abort's budget too.
	// It also takes the key (an Upload with no ID) when CreateMultipart
	// failed, since attempts whose answers were lost (a hung store queues
	// requests and runs them when it resumes) may have started uploads of
	// the key: set it only for keys no one else uploads to.
	Abandon func(Upload)
}

// slowCreate is how long a CreateMultipart may take before PutParallel
// takes it for retried (see there): answers come in milliseconds.
const slowCreate = time.Second

// abortTimeout bounds the cleanup of a failed upload, which runs even after
// the caller's context is done.
const abortTimeout = 30 * time.Second

// WholePutter is an optional ability of a Store: PutsWhole reports that one
// Put of a body at hand costs it no more than parts in parallel, and parts
// cost it more. A local directory (localfs) stores each part in a file of
// its own and then copies them all into the object: every byte written, and
// fsynced, twice, where a Put writes it once. Wrappers forward it from the
// store they wrap (faulty does not: its rules are written for multipart
// calls too).
type WholePutter interface {
	PutsWhole() bool
}

// PutsWhole reports whether s is a WholePutter that puts whole; false for
// every other Store.
func PutsWhole(s Store) bool {
	w, ok := s.(WholePutter)
	return ok && w.PutsWhole()
}

// PutParallel stores size bytes of r under key with the Put contract. If the
// object spans more than one part, it uploads parts in parallel and completes
// them; otherwise, or if the store puts whole (PutsWhole), it is a single
// Put. A failed multipart upload is aborted.
func PutParallel(ctx context.Context, s Store, key string, r io.ReaderAt, size int64, o ParallelOptions) error {
	partSize, conc := o.resolve(size)
	if size <= partSize || PutsWhole(s) {
		_, err := s.Put(ctx, key, io.NewSectionReader(r, 0, size), size)
		return err
	}
	start := time.Now()
	u, err := s.CreateMultipart(ctx, key)
	if err != nil {
		if o.Abandon != nil && unknownOutcome(err) {
			o.Abandon(Upload{Key: key})
		}
		return err
	}
	// A create that took this long was most likely retried by the store's
	// retry layer after an attempt whose answer was lost, and a hung store
	// runs such an attempt when it resumes: an upload of the key nobody
	// knows. The key goes to Abandon too, whatever becomes of u, so that
	// its other uploads are listed and aborted.
	if o.Abandon != nil && time.Since(start) > slowCreate {
		defer o.Abandon(Upload{Key: key})
	}
	parts, err := uploadParts(ctx, s, u, r, size, partSize, conc)
	if err == nil {
		_, err = s.CompleteMultipart(ctx, u, parts)
	}
	if err != nil && o.Abandon != nil {
		o.Abandon(u)
		return err
	}
	if err != nil {
		return errors.Join(err, AbortUpload(ctx, s, u))
	}
	return nil
}

// unknownOutcome reports whether a request that failed with err may have
// been carried out all the same: it timed out or broke, or its caller gave
// up on it (a request already sent runs on).
func unknownOutcome(err error) bool {
	return IsRetryable(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// AbortUpload aborts u on a context of its own, detached from ctx's
// cancellation and bounded in time, so that a cancelled upload does not leave
// its parts behind.
func AbortUpload(ctx context.Context, s Store, u Upload) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	return s.AbortMultipart(actx, u)
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
func uploadParts(ctx context.Context, ms Store, u Upload, r io.ReaderAt, size, partSize int64, conc int) ([]Part, error) {
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

// CompareUploads orders uploads as ListUploads returns them: by key, then
// start time, then id.
func CompareUploads(a, b Upload) int {
	return cmp.Or(strings.Compare(a.Key, b.Key), a.Started.Compare(b.Started), strings.Compare(a.ID, b.ID))
}
