package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
)

// Sentinel errors. Backends wrap them (with the backend's own error beside
// them) in an *Error; check with errors.Is.
var (
	// ErrNotFound: no object under the key (or no such multipart upload).
	ErrNotFound = errors.New("object not found")
	// ErrInvalidKey: the key breaks the rules of ValidateKey or the backend's.
	ErrInvalidKey = errors.New("invalid object key")
	// ErrInvalidRange: a negative offset, or an offset beyond the object's end.
	ErrInvalidRange = errors.New("invalid range")
	// ErrSizeMismatch: a body shorter or longer than the size it was declared with.
	ErrSizeMismatch = errors.New("body size does not match declared size")
	// ErrChanged: the object is not (or no longer) of the version asked for
	// (GetVersion, Copy with an ETag, a resumed read). Repeating the same
	// request cannot help: look the object up again.
	ErrChanged = errors.New("object changed")
	// ErrThrottled: the store asked us to slow down (S3 503 SlowDown, 429).
	// Retryable, ideally with a longer backoff.
	ErrThrottled = errors.New("throttled by object store")
	// ErrTimeout: a request took too long, short of the caller's own deadline.
	// Retryable.
	ErrTimeout = errors.New("object store request timed out")
	// ErrTransient: any other failure that may pass on its own: a 5xx, a reset
	// connection, a body cut short. Retryable.
	ErrTransient = errors.New("transient object store failure")
)

// Error records the operation and key that failed, as fs.PathError does for
// files. Err wraps a sentinel where one applies.
type Error struct {
	Op  Op
	Key string
	Err error
}

func (e *Error) Error() string {
	return "object " + string(e.Op) + " " + strconv.Quote(e.Key) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// WrapError returns err as an *Error for op and key; nil stays nil, and an
// *Error for the same key is returned as it is, so that wrappers stacked on a
// Store do not repeat the key.
func WrapError(op Op, key string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok && e.Key == key {
		return err
	}
	return &Error{Op: op, Key: key, Err: err}
}

// IsRetryable reports whether repeating the failed request may succeed:
// throttling, timeouts and transient failures (as classified by the backend),
// plus the raw network failures a reader can surface mid-body (connection
// reset, unexpected EOF, network timeouts). The caller's own cancellation or
// deadline is never retryable, nor is anything the request itself got wrong.
func IsRetryable(err error) bool {
	switch {
	case err == nil:
		return false
	// NB: checked first because context.DeadlineExceeded is also a net.Error
	// whose Timeout() is true.
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidKey),
		errors.Is(err, ErrInvalidRange), errors.Is(err, ErrSizeMismatch), errors.Is(err, ErrChanged):
		return false
	case errors.Is(err, ErrThrottled), errors.Is(err, ErrTimeout), errors.Is(err, ErrTransient):
		return true
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Changed returns the error of a request for version etag of an object whose
// current ETag is current ("" if there is none: the error then matches
// ErrNotFound too).
func Changed(etag, current string) error {
	if current == "" {
		return fmt.Errorf("%w: version %q is gone: %w", ErrChanged, etag, ErrNotFound)
	}
	return fmt.Errorf("%w: version %q is now %q", ErrChanged, etag, current)
}
