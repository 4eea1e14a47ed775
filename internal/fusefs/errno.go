package fusefs

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
)

// errnoOf is the one translation of a client error into the errno a POSIX
// program expects. Temporary conditions (no leader within the client's
// retry budget, no worker) are EIO only once the client's one retry layer
// gave up; an errno already (a local disk's) passes through.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	switch {
	case fserr.IsQuota(err):
		return syscall.EDQUOT
	case errors.Is(err, fserr.ErrNotFound), errors.Is(err, fserr.ErrNoNamespace):
		return syscall.ENOENT
	case errors.Is(err, fserr.ErrExists):
		return syscall.EEXIST
	case errors.Is(err, fserr.ErrPermission), errors.Is(err, fserr.ErrUnauthenticated):
		return syscall.EACCES
	case errors.Is(err, fserr.ErrNotDir), errors.Is(err, fserr.ErrParentNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, fserr.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, fserr.ErrNotEmpty):
		return syscall.ENOTEMPTY
	case errors.Is(err, fserr.ErrInvalidPath):
		return pathErrno(err)
	case errors.Is(err, fserr.ErrRenameLoop), errors.Is(err, fserr.ErrInvalidArgument):
		return syscall.EINVAL
	case errors.Is(err, fserr.ErrRoot):
		return syscall.EBUSY
	case errors.Is(err, fserr.ErrLeaseConflict), errors.Is(err, fserr.ErrNoLease):
		return syscall.ETXTBSY
	case errors.Is(err, fserr.ErrUnsupported):
		return syscall.EOPNOTSUPP
	case errors.Is(err, fserr.ErrChanged):
		return syscall.ESTALE
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	}
	return syscall.EIO
}

// pathErrno tells a name too long from a path the rule refuses otherwise.
func pathErrno(err error) syscall.Errno {
	if strings.Contains(fspath.Reason(err), "bytes long") {
		return syscall.ENAMETOOLONG
	}
	return syscall.EINVAL
}

// checkName is what a name the kernel hands over must be before any call
// leaves: the errno a POSIX program expects for each way it can be wrong.
func checkName(name string, isNew bool) syscall.Errno {
	switch {
	case len(name) > fspath.MaxNameLen:
		return syscall.ENAMETOOLONG
	case !utf8.ValidString(name):
		return syscall.EILSEQ
	case isNew && fspath.NewName(name) != nil:
		return syscall.EINVAL
	}
	return 0
}

// status turns an errno into go-fuse's Status.
func status(e syscall.Errno) fuse.Status { return fuse.Status(e) }
