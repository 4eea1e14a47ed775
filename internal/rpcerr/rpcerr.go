// Package rpcerr translates the file system's error conditions (internal/fserr)
// to and from gRPC statuses: the one mapping, used once per boundary. The
// services' interceptors (Interceptors) turn every error a handler returns
// into a status whose ErrorInfo reason names the condition; clients turn the
// reason back into the same sentinel (and, in other languages, into the
// IOException or OSError that docs/errors.md names).
package rpcerr

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/fserr"
)

// Domain is the ErrorInfo domain of Strata's statuses.
const Domain = "strata.io"

// table is the one mapping between conditions, reasons and gRPC codes.
var table = []struct {
	err    error
	reason string
	code   codes.Code
}{
	{fserr.ErrNotFound, "NOT_FOUND", codes.NotFound},
	{fserr.ErrExists, "ALREADY_EXISTS", codes.AlreadyExists},
	{fserr.ErrPermission, "PERMISSION_DENIED", codes.PermissionDenied},
	{fserr.ErrNotDir, "NOT_DIRECTORY", codes.FailedPrecondition},
	{fserr.ErrIsDir, "IS_DIRECTORY", codes.FailedPrecondition},
	{fserr.ErrParentNotDir, "PARENT_NOT_DIRECTORY", codes.FailedPrecondition},
	{fserr.ErrNotEmpty, "DIRECTORY_NOT_EMPTY", codes.FailedPrecondition},
	{fserr.ErrInvalidPath, "INVALID_PATH", codes.InvalidArgument},
	{fserr.ErrInvalidArgument, "INVALID_ARGUMENT", codes.InvalidArgument},
	{fserr.ErrLeaseConflict, "LEASE_CONFLICT", codes.FailedPrecondition},
	{fserr.ErrNoLease, "NO_LEASE", codes.FailedPrecondition},
	{fserr.ErrRenameLoop, "RENAME_LOOP", codes.InvalidArgument},
	{fserr.ErrRoot, "ROOT_DIRECTORY", codes.InvalidArgument},
	{fserr.ErrNoNamespace, "NO_NAMESPACE", codes.NotFound},
	{fserr.ErrUnsupported, "UNSUPPORTED", codes.Unimplemented},
	{fserr.ErrChanged, "CHANGED", codes.FailedPrecondition},
	{fserr.ErrQuorum, "QUORUM", codes.FailedPrecondition},
	{fserr.ErrUnavailable, "UNAVAILABLE", codes.Unavailable},
	{fserr.ErrUnauthenticated, "UNAUTHENTICATED", codes.Unauthenticated},
	{fserr.ErrNotLeader, "NOT_LEADER", codes.Unavailable},
	{fserr.ErrNSQuotaExceeded, "NS_QUOTA_EXCEEDED", codes.ResourceExhausted},
	{fserr.ErrDSQuotaExceeded, "DS_QUOTA_EXCEEDED", codes.ResourceExhausted},
	{fserr.ErrNoXAttr, "NO_XATTR", codes.FailedPrecondition},
	{fserr.ErrInvalidACL, "INVALID_ACL", codes.InvalidArgument},
}

// leaderKey is the ErrorInfo metadata key of a NOT_LEADER status that holds
// the leader's address.
const leaderKey = "leader"

// ToStatus converts err into a gRPC status error whose ErrorInfo reason names
// the condition; the message is err's text. Unknown errors become Internal.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	// NB: a message may quote a path that is not UTF-8 (the one refused for
	// it); a status whose message is not UTF-8 cannot be marshalled, as a
	// batch's results are.
	msg := strings.ToValidUTF8(err.Error(), "\uFFFD")
	for _, e := range table {
		if errors.Is(err, e.err) {
			info := &errdetails.ErrorInfo{Reason: e.reason, Domain: Domain}
			if leader := fserr.LeaderOf(err); leader != "" {
				info.Metadata = map[string]string{leaderKey: leader}
			}
			st, derr := status.New(e.code, msg).WithDetails(info)
			if derr != nil {
				return status.Error(e.code, msg)
			}
			return st.Err()
		}
	}
	return status.Error(codes.Internal, msg)
}

// FromStatus converts a status error from the service back into an error
// that wraps the condition's sentinel and carries the server's message; a
// status without a Strata ErrorInfo (the call got no answer of a service)
// becomes a *TransportError. Other errors are returned as they are.
func FromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil || isTransport(err) {
		return err
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.Domain != Domain {
			continue
		}
		for _, e := range table {
			if e.reason == info.Reason {
				return &fserr.Error{Cond: e.err, Msg: st.Message(), Leader: info.Metadata[leaderKey]}
			}
		}
	}
	return transport(st)
}

// UnaryServerInterceptor translates the error of every unary handler.
func UnaryServerInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	return resp, ToStatus(err)
}

// StreamServerInterceptor translates the error of every streaming handler.
func StreamServerInterceptor(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return ToStatus(h(srv, ss))
}

// ServerOptions are the options that make a gRPC server translate its
// handlers' errors.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(UnaryServerInterceptor),
		grpc.ChainStreamInterceptor(StreamServerInterceptor)}
}
