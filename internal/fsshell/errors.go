package fsshell

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/rpcerr"
)

// The texts of Hadoop's PathIOException family (PathExceptions.java), which
// are what a Hadoop user reads after "cmd: `path': ".
const (
	msgNotFound    = "No such file or directory"
	msgExists      = "File exists"
	msgIsDir       = "Is a directory"
	msgNotDir      = "Is not a directory"
	msgNotEmpty    = "Directory is not empty"
	msgIO          = "Input/output error"
	msgUnsupported = "Operation not supported"
	msgNotPermit   = "Operation not permitted"
)

// pathError is Hadoop's PathIOException: "[op ]`path'[ to `target']: msg".
type pathError struct {
	op, path, target, msg string
}

func (e *pathError) Error() string {
	var b strings.Builder
	if e.op != "" {
		b.WriteString(e.op + " ")
	}
	// NB: a path may hold what the terminal must not see (a newline, bytes
	// that are not UTF-8): it is shown as -ls shows names.
	b.WriteString("`" + printable(e.path) + "'")
	if e.target != "" {
		b.WriteString(" to `" + printable(e.target) + "'")
	}
	b.WriteString(": " + e.msg)
	return b.String()
}

func errPath(path, msg string) error { return &pathError{path: path, msg: msg} }

func errNotFound(path string) error { return errPath(path, msgNotFound) }

// errInvalidPath is a path that breaks Strata's path rule, with the reason
// the rule gives (internal/fspath).
func errInvalidPath(path string, err error) error {
	msg := "Invalid path name"
	if r := fspath.Reason(err); r != "" {
		msg += ": " + r
	}
	return errPath(path, msg)
}

// explain turns an error of the client about the path displayed as text
// (absolute path abs) into what FsShell would print for it.
func (sh *shell) explain(text, abs string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fserr.ErrNotFound):
		return errNotFound(text)
	case errors.Is(err, fserr.ErrExists):
		return errPath(text, msgExists)
	case errors.Is(err, fserr.ErrIsDir):
		return errPath(text, msgIsDir)
	case errors.Is(err, fserr.ErrNotDir), errors.Is(err, fserr.ErrParentNotDir):
		return errPath(text, msgNotDir)
	case errors.Is(err, fserr.ErrNotEmpty):
		return errPath(text, msgNotEmpty)
	case errors.Is(err, fserr.ErrPermission):
		// NB: HDFS names the access and the inode that refused it; the
		// service only says that one did, so the path asked for is shown.
		return fmt.Errorf("Permission denied: user=%s, path=\"%s\"", sh.user(), abs)
	case errors.Is(err, fserr.ErrInvalidPath):
		return errInvalidPath(text, err)
	case errors.Is(err, fserr.ErrRoot):
		return errPath(text, msgNotPermit)
	case errors.Is(err, fserr.ErrNoNamespace):
		return errPath(text, "No such namespace")
	case errors.Is(err, fserr.ErrUnsupported):
		return errPath(text, msgUnsupported+": "+detail(err))
	case errors.Is(err, fserr.ErrLeaseConflict):
		return errPath(text, "File is being written by another client")
	case fserr.IsQuota(err), errors.Is(err, fserr.ErrInvalidACL), errors.Is(err, fserr.ErrNoXAttr):
		// HDFS's own words, as its exceptions carry them.
		return errors.New(detail(err))
	}
	// NB: temporary conditions (ErrUnavailable: no live workers, the bucket
	// unavailable, no leader found) are shown whole, cause included: their
	// messages name the operation and the path.
	return err
}

// detail is the part of a service message after "op path: ".
func detail(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// message is the one line displayed for err. The client hands back its
// service's answers and its transport failures translated already
// (internal/rpcerr); a gRPC status that escaped that is translated here, so
// that gRPC's wrapping ("rpc error: code = ...") never reaches the user.
func message(err error) string {
	var pe *pathError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	if _, ok := status.FromError(err); ok {
		err = rpcerr.FromStatus(err)
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}
