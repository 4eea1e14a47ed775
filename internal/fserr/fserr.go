// Package fserr holds the file system's error conditions: sentinels to test
// with errors.Is, and Error, a condition with its message. The namespace
// returns them; internal/rpcerr translates them to and from gRPC statuses,
// once, at the edge of each service and client, so that this package (and
// the namespace core) needs no RPC library.
package fserr

import (
	"errors"
	"fmt"
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
	// ErrChanged: a cache-mode file's object changed in the bucket since
	// the file was opened; open it again to read the new version.
	ErrChanged = errors.New("the file's object changed in the bucket")
	// ErrQuorum: a membership change refused because the group would lose
	// its quorum (the voters left that answer would not be a majority).
	ErrQuorum = errors.New("the group would lose its quorum")
	// ErrUnauthenticated: the call carries no credentials the service
	// accepts (no token, a forged, expired or revoked one).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrUnavailable: a service or worker could not be reached.
	ErrUnavailable = errors.New("unavailable")
	// ErrNotLeader: the member asked is not the namespace service's leader;
	// LeaderOf tells the leader it knows of, if any.
	ErrNotLeader = errors.New("not the leader")
	// ErrNSQuotaExceeded: the operation would put more names (files and
	// directories) under a directory than its name quota allows (HDFS's
	// NSQuotaExceededException; EDQUOT to a POSIX caller).
	ErrNSQuotaExceeded = errors.New("name quota exceeded")
	// ErrDSQuotaExceeded: the operation would put more bytes under a
	// directory than its space quota allows (HDFS's
	// DSQuotaExceededException; EDQUOT to a POSIX caller).
	ErrDSQuotaExceeded = errors.New("space quota exceeded")
	// ErrNoXAttr: the file has no extended attribute of that name (ENODATA
	// to a POSIX caller).
	ErrNoXAttr = errors.New("no such extended attribute")
	// ErrInvalidACL: an ACL, or a change to one, that HDFS's rules refuse
	// (HDFS's AclException).
	ErrInvalidACL = errors.New("invalid ACL")
)

// IsQuota reports whether err is a quota refusal, of names or of space:
// what a POSIX caller sees as EDQUOT.
func IsQuota(err error) bool {
	return errors.Is(err, ErrNSQuotaExceeded) || errors.Is(err, ErrDSQuotaExceeded)
}

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
