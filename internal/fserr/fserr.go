// Package fserr holds the file system's error conditions and their one
// translation to and from gRPC statuses. The namespace returns these
// sentinels; the service turns them into statuses with a reason; clients
// turn the reason back into the same sentinel (and, in other languages, into
// the IOException or OSError that docs/errors.md names).
package fserr

import (
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The error conditions. Test with errors.Is.
var (
	ErrNotFound        = errors.New("no such file or directory")
	ErrExists          = errors.New("file exists")
	ErrPermission      = errors.New("permission denied")
	ErrNotDir          = errors.New("not a directory")
	ErrIsDir           = errors.New("is a directory")
	ErrParentNotDir    = errors.New("parent path is not a directory")
	ErrNotEmpty        = errors.New("directory is not empty")
	ErrInvalidPath     = errors.New("invalid path")
	ErrInvalidArgument = errors.New("invalid argument")
	ErrLeaseConflict   = errors.New("file is being written by another client")
	ErrNoLease         = errors.New("no lease on file (it expired or the file was replaced)")
	ErrRenameLoop      = errors.New("destination is inside the source")
	ErrRoot            = errors.New("operation not allowed on the root directory")
	ErrNoNamespace     = errors.New("no such namespace")
	ErrUnsupported     = errors.New("operation not supported")
	// ErrUnavailable: a service or worker could not be reached.
	ErrUnavailable = errors.New("unavailable")
	// ErrNotLeader: the member asked is not the namespace service's leader;
	// LeaderOf tells the leader it knows of, if any.
	ErrNotLeader = errors.New("not the leader")
)

// Domain is the ErrorInfo domain of Strata's statuses.
const Domain = "strata.io"

// table is the one mapping between conditions, reasons and gRPC codes.
var table = []struct {
	err    error
	reason string
	code   codes.Code
}{
	{ErrNotFound, "NOT_FOUND", codes.NotFound},
	{ErrExists, "ALREADY_EXISTS", codes.AlreadyExists},
	{ErrPermission, "PERMISSION_DENIED", codes.PermissionDenied},
	{ErrNotDir, "NOT_DIRECTORY", codes.FailedPrecondition},
	{ErrIsDir, "IS_DIRECTORY", codes.FailedPrecondition},
	{ErrParentNotDir, "PARENT_NOT_DIRECTORY", codes.FailedPrecondition},
	{ErrNotEmpty, "DIRECTORY_NOT_EMPTY", codes.FailedPrecondition},
	{ErrInvalidPath, "INVALID_PATH", codes.InvalidArgument},
	{ErrInvalidArgument, "INVALID_ARGUMENT", codes.InvalidArgument},
	{ErrLeaseConflict, "LEASE_CONFLICT", codes.FailedPrecondition},
	{ErrNoLease, "NO_LEASE", codes.FailedPrecondition},
	{ErrRenameLoop, "RENAME_LOOP", codes.InvalidArgument},
	{ErrRoot, "ROOT_DIRECTORY", codes.InvalidArgument},
	{ErrNoNamespace, "NO_NAMESPACE", codes.NotFound},
	{ErrUnsupported, "UNSUPPORTED", codes.Unimplemented},
	{ErrUnavailable, "UNAVAILABLE", codes.Unavailable},
	{ErrNotLeader, "NOT_LEADER", codes.Unavailable},
}

// leaderKey is the ErrorInfo metadata key of a NOT_LEADER status that holds
// the leader's address.
const leaderKey = "leader"

// NotLeader returns ErrNotLeader naming the leader's address ("" when no
// leader is known).
func NotLeader(leader string) error {
	msg := "this member is not the leader and knows of none (an election is under way)"
	if leader != "" {
		msg = "this member is not the leader; the leader is " + leader
	}
	return &Error{Cond: ErrNotLeader, Msg: msg, Leader: leader}
}

// LeaderOf returns the leader's address carried by a NotLeader error, or "".
func LeaderOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Leader
	}
	return ""
}

// ToStatus converts err into a gRPC status error whose ErrorInfo reason names
// the condition; the message is err's text. Unknown errors become Internal.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	for _, e := range table {
		if errors.Is(err, e.err) {
			info := &errdetails.ErrorInfo{Reason: e.reason, Domain: Domain}
			if leader := LeaderOf(err); leader != "" {
				info.Metadata = map[string]string{leaderKey: leader}
			}
			st, derr := status.New(e.code, err.Error()).WithDetails(info)
			if derr != nil {
				return status.Error(e.code, err.Error())
			}
			return st.Err()
		}
	}
	return status.Error(codes.Internal, err.Error())
}

// FromStatus converts a status error from the service back into an error
// that wraps the condition's sentinel and carries the server's message.
// Other errors are returned as they are.
func FromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.Domain != Domain {
			continue
		}
		for _, e := range table {
			if e.reason == info.Reason {
				return &Error{Cond: e.err, Msg: st.Message(), Leader: info.Metadata[leaderKey]}
			}
		}
	}
	return err
}

// Error is a condition reported by the service with its message, which
// already names the operation and path.
type Error struct {
	Cond error
	Msg  string
	// Leader is the leader's address, for ErrNotLeader.
	Leader string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the condition.
func (e *Error) Unwrap() error { return e.Cond }

// Errorf returns an error for condition cond with a formatted message.
func Errorf(cond error, format string, args ...any) error {
	return &Error{Cond: cond, Msg: fmt.Sprintf(format, args...)}
}
