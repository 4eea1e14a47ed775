// Package object is Strata's view of an object store: the Store interface that
// workers use to keep immutable file blocks in a bucket, the sentinel errors
// every backend translates its own errors into, and the optional multipart
// extension with its fallback helper PutParallel; also Sleep, the
// cancellable wait its wrappers share.
//
// It is not a general S3 client: there are no ACLs, versions, metadata, copies
// or presigned URLs, only what the data path needs. Backends live in
// sub-packages (mem, localfs, s3) and so do wrappers that compose around any
// Store (faulty, throttle, retry); objtest holds the conformance suite every
// implementation must pass.
//
// Keys are slash-separated, relative, with no empty, "." or ".." component
// (see ValidateKey), so that every backend, including a local directory, can
// hold every valid key.
package object

import (
	"context"
	"io"
	"time"
)

// Store is a flat namespace of immutable-by-convention objects.
//
// All methods are safe for concurrent use. Every error names the operation and
// key (*Error) and wraps one of the sentinels below where one applies, to be
// checked with errors.Is; IsRetryable tells which failures may succeed when
// repeated. Implementations do not retry: the retry package is the one layer
// that does.
type Store interface {
	// Put stores exactly size bytes read from r under key, replacing any
	// object already there (the last completed Put wins). Visibility is
	// atomic: readers see the old object or the whole new one, never a
	// prefix. Put is idempotent: repeating it with the same content is
	// harmless. If r yields fewer or more than size bytes, Put fails with
	// ErrSizeMismatch and stores nothing.
	Put(ctx context.Context, key string, r io.Reader, size int64) error

	// Get returns length bytes of the object starting at off; length < 0
	// means up to the end, and a range past the end is cut at the end. off
	// equal to the size yields an empty reader; off beyond it fails with
	// ErrInvalidRange. A missing key fails with ErrNotFound. The caller must
	// Close the reader; ctx governs the whole read, not only the call.
	Get(ctx context.Context, key string, off, length int64) (io.ReadCloser, error)

	// Head returns the object's Info, or ErrNotFound.
	Head(ctx context.Context, key string) (Info, error)

	// List returns the objects whose keys start with prefix and sort strictly
	// after startAfter, in ascending byte order, at most limit of them
	// (limit <= 0: all). Fewer than limit results means the listing is
	// complete; to page on, pass the last key back as startAfter. Uploads in
	// progress are not listed.
	List(ctx context.Context, prefix, startAfter string, limit int) ([]Info, error)

	// Delete removes the object. Deleting a missing key is not an error, so
	// Delete is idempotent.
	Delete(ctx context.Context, key string) error
}

// Info describes one stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time // when the object was last written, by the store's clock
}

// Op names a Store operation, in errors and in fault-injection rules.
type Op string

// The operations of Store and MultipartStore.
const (
	OpPut               Op = "put"
	OpGet               Op = "get"
	OpHead              Op = "head"
	OpList              Op = "list"
	OpDelete            Op = "delete"
	OpCreateMultipart   Op = "create-multipart"
	OpUploadPart        Op = "upload-part"
	OpCompleteMultipart Op = "complete-multipart"
	OpAbortMultipart    Op = "abort-multipart"
)
