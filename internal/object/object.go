// Package object is Strata's view of an object store: the Store interface
// that workers use to keep file blocks (block mode) and that cache mode uses
// to present an existing bucket as a file system; the sentinel errors every
// backend translates its own errors into; key rules (ValidateKey, directory
// markers); multipart helpers (PutParallel for a body at hand, Writer for a
// stream); optional abilities that wrappers forward (WholePutter, and
// SkipLister, which says what a listing left out); and Sleep, the
// cancellable wait its wrappers share.
//
// It is not a general S3 client: there are no ACLs, version ids, user
// metadata or presigned URLs, only what the data path and cache mode need.
// Backends live in sub-packages (mem, localfs, s3) and so do wrappers that
// compose around any Store (faulty, throttle, retry); objtest holds the
// conformance suite every implementation must pass.
//
// Keys are slash-separated, relative, with no empty, "." or ".." component
// (see ValidateKey), so that every backend, including a local directory, can
// hold every valid key. A key ending in "/" is a directory marker (S3A's):
// a zero-length object that says a "directory" exists without children.
//
// Versions: every object carries an ETag (Info.ETag), an opaque tag that
// changes whenever the object's content may have changed. GetVersion and Copy
// take one to act on that version only, failing with ErrChanged otherwise.
package object

import (
	"context"
	"io"
	"time"
)

// Store is a flat namespace of objects, with S3's semantics.
//
// All methods are safe for concurrent use. Every error names the operation and
// key (*Error) and wraps one of the sentinels below where one applies, to be
// checked with errors.Is; IsRetryable tells which failures may succeed when
// repeated. Implementations do not retry: the retry package is the one layer
// that does. Every method but CreateMultipart and CompleteMultipart is
// idempotent: repeating a call that succeeded, or whose outcome is unknown,
// is harmless (the retry layer checks a repeated Complete's outcome).
type Store interface {
	// Put stores exactly size bytes read from r under key, replacing any
	// object already there (the last completed Put wins), and returns the
	// new object's Info. Visibility is atomic: readers see the old object
	// or the whole new one, never a prefix. If r yields fewer or more than
	// size bytes, Put fails with ErrSizeMismatch and stores nothing. A
	// marker key (ending in "/") takes size 0 only, else ErrInvalidKey.
	Put(ctx context.Context, key string, r io.Reader, size int64) (Info, error)

	// Get returns length bytes of the object starting at off; length < 0
	// means up to the end, and a range past the end is cut at the end. off
	// equal to the size yields an empty reader; off beyond it fails with
	// ErrInvalidRange. A missing key fails with ErrNotFound. The caller must
	// Close the reader; ctx governs the whole read, not only the call. The
	// reader tells which version it reads (Reader.Info); the retry layer
	// resumes a broken read of it on that version only.
	Get(ctx context.Context, key string, off, length int64) (Reader, error)

	// GetVersion is Get of the object's version etag only: if the object
	// under key has another ETag it fails with ErrChanged, before any byte
	// is read, and if there is none it fails with an error matching both
	// ErrNotFound and ErrChanged. The bytes read all belong to that version,
	// also when the object is replaced during the read; localfs, where
	// another program may rewrite a file in place, ends such a read with
	// ErrChanged instead of io.EOF.
	GetVersion(ctx context.Context, key, etag string, off, length int64) (Reader, error)

	// Head returns the object's Info, or ErrNotFound.
	Head(ctx context.Context, key string) (Info, error)

	// List returns the objects whose keys start with prefix and sort strictly
	// after startAfter, in ascending byte order, at most limit of them
	// (limit <= 0: all), directory markers included. Fewer than limit
	// results means the listing is complete; to page on, pass the last key
	// back as startAfter. Uploads in progress are not listed.
	List(ctx context.Context, prefix, startAfter string, limit int) ([]Info, error)

	// ListDir returns one page of the direct children of prefix, as S3's
	// ListObjectsV2 with delimiter "/": the objects whose keys start with
	// prefix and have no "/" after it, and the common prefixes (Entry.Prefix:
	// the "subdirectories", each the part of a longer key up to its first
	// "/" after prefix), together in ascending key order, each prefix once.
	// prefix is usually "" or ends in "/"; the marker of prefix itself is
	// not an entry (Head it). A page holds at most limit entries (limit <=
	// 0: DefaultListDirLimit) and may hold fewer before the end; next is
	// "" at the end, else an opaque token to pass back with the same prefix
	// for the next page. Entries added or removed while paging may or may
	// not show; one present throughout shows exactly once.
	ListDir(ctx context.Context, prefix, token string, limit int) (entries []Entry, next string, err error)

	// Delete removes the object. Deleting a missing key is not an error, so
	// Delete is idempotent. Deleting a marker leaves the objects under it:
	// their prefix stays, implied by them, as on S3.
	Delete(ctx context.Context, key string) error

	// Copy makes dst a copy of the object src, inside the store (no bytes
	// through the caller), atomically as Put does, and returns dst's Info.
	// If srcETag is not "", only that version of src is copied: otherwise
	// Copy fails with ErrChanged, as GetVersion does. A missing src fails
	// with ErrNotFound. src and dst differ and are both markers or neither,
	// else ErrInvalidKey. Copy is idempotent for a given srcETag.
	Copy(ctx context.Context, src, srcETag, dst string) (Info, error)

	Multipart
}

// Multipart is the part of Store that assembles an object from parts
// uploaded independently and in parallel (S3 multipart upload). Use
// PutParallel for a body at hand and NewWriter for a stream, rather than
// these calls directly.
//
// Nothing of an upload is visible under its key before CompleteMultipart,
// which makes the whole object visible at once. Uploads that are neither
// completed nor aborted keep their parts stored until someone aborts them:
// ListUploads finds them.
type Multipart interface {
	// CreateMultipart starts an upload to key (never a marker). It is not
	// idempotent: a repeated call starts another upload.
	CreateMultipart(ctx context.Context, key string) (Upload, error)

	// UploadPart stores part num (1..MaxParts) of exactly size bytes from r.
	// Every part but the last must be at least MinPartSize. Uploading a num
	// again replaces that part, so UploadPart is idempotent. An unknown
	// upload fails with ErrNotFound.
	UploadPart(ctx context.Context, u Upload, num int, r io.Reader, size int64) (Part, error)

	// CompleteMultipart makes the object under u.Key the concatenation of
	// parts, which are in ascending Num order and as UploadPart returned
	// them, ends the upload and returns the object's Info. An upload that is
	// unknown (never created, aborted or already completed) fails with
	// ErrNotFound.
	CompleteMultipart(ctx context.Context, u Upload, parts []Part) (Info, error)

	// AbortMultipart ends the upload and discards its parts. An unknown
	// upload is not an error, so AbortMultipart is idempotent.
	AbortMultipart(ctx context.Context, u Upload) error

	// ListUploads returns the uploads in progress (created, neither
	// completed nor aborted) whose keys start with prefix, with the time
	// each started, in ascending key order (then start time), so that
	// abandoned ones can be found and aborted. NB: a store that lists by
	// whole key only (MinIO) takes prefix as a key, and fails with
	// errors.ErrUnsupported for one that can be no key ("" or ending in
	// "/"): to find the uploads of a known key everywhere, pass the key and
	// keep those whose Key equals it.
	ListUploads(ctx context.Context, prefix string) ([]Upload, error)
}

// Info describes one stored object.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time // when the object was last written, by the store's clock
	// ETag is an opaque tag of the object's version: it changes whenever
	// the content may have changed (rewriting the same bytes may or may not
	// change it), and two Infos of one key with equal ETags have the same
	// content. S3: the object's ETag, without quotes. Head, List, ListDir,
	// Get's Reader, Put, Copy and CompleteMultipart all give it.
	ETag string
}

// Entry is one child of a ListDir: an object, or a common prefix.
type Entry struct {
	// Info is the object's; for a prefix only Key is set, and it ends in "/".
	Info
	// Prefix says the entry is a common prefix ("subdirectory"): objects (or
	// markers) exist below it.
	Prefix bool
}

// Reader is the body of a Get: the bytes asked for, and which version of the
// object they come from.
type Reader interface {
	io.ReadCloser
	// Info returns the Info of the object being read (its whole size, not
	// the range's), as of the response: the version every byte comes from.
	Info() Info
}

// Op names a Store operation, in errors and in fault-injection rules.
type Op string

// The operations of Store. GetVersion is an OpGet.
const (
	OpPut               Op = "put"
	OpGet               Op = "get"
	OpHead              Op = "head"
	OpList              Op = "list"
	OpListDir           Op = "list-dir"
	OpDelete            Op = "delete"
	OpCopy              Op = "copy"
	OpCreateMultipart   Op = "create-multipart"
	OpUploadPart        Op = "upload-part"
	OpCompleteMultipart Op = "complete-multipart"
	OpAbortMultipart    Op = "abort-multipart"
	OpListUploads       Op = "list-uploads"
)

// DefaultListDirLimit is the page size of a ListDir whose limit is <= 0; it
// is S3's own cap per request.
const DefaultListDirLimit = 1000
