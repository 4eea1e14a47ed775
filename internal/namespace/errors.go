package namespace

import "github.com/stratafs/strata/internal/fserr"

// Sentinel errors, shared with clients through fserr. Operations wrap them
// in a *PathError; test with errors.Is.
var (
	ErrNotFound        = fserr.ErrNotFound
	ErrExists          = fserr.ErrExists
	ErrPermission      = fserr.ErrPermission
	ErrNotDir          = fserr.ErrNotDir
	ErrIsDir           = fserr.ErrIsDir
	ErrParentNotDir    = fserr.ErrParentNotDir
	ErrNotEmpty        = fserr.ErrNotEmpty
	ErrInvalidPath     = fserr.ErrInvalidPath
	ErrInvalidArgument = fserr.ErrInvalidArgument
	// ErrLeaseConflict: the file is open for writing by another client.
	ErrLeaseConflict = fserr.ErrLeaseConflict
	// ErrNoLease: the caller does not hold the lease it claims (it expired
	// and was recovered, or the file was replaced).
	ErrNoLease = fserr.ErrNoLease
	// ErrRenameLoop: the destination lies inside the source.
	ErrRenameLoop = fserr.ErrRenameLoop
	// ErrRoot: the operation is not allowed on a namespace root.
	ErrRoot = fserr.ErrRoot
	// ErrNoNamespace: the namespace does not exist.
	ErrNoNamespace = fserr.ErrNoNamespace
	// ErrUnsupported: the namespace cannot do that (a cache-mode
	// namespace's files are objects: no append, flush or truncate).
	ErrUnsupported = fserr.ErrUnsupported
	// ErrUnavailable: not now; the same call may succeed later.
	ErrUnavailable = fserr.ErrUnavailable
)

// PathError records an error and the operation and path that caused it.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *PathError) Unwrap() error { return e.Err }

func pathErr(op, path string, err error) error {
	return &PathError{Op: op, Path: path, Err: err}
}
