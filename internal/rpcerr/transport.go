package rpcerr

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/fserr"
)

// TransportError is a call that got no answer of a Strata service: it
// never reached one, or the connection broke, or the deadline passed. Its
// message says so in a few words, without gRPC's wrapping ("connection
// refused", "the connection was closed"); the caller names whom it called.
//
// It is fserr.ErrUnavailable for errors.Is when the status was UNAVAILABLE,
// context.DeadlineExceeded or context.Canceled for those, and it keeps its
// gRPC code for status.Code.
type TransportError struct {
	Code codes.Code
	Msg  string
}

func (e *TransportError) Error() string { return e.Msg }

// Is reports whether e is target's kind of failure.
func (e *TransportError) Is(target error) bool {
	switch e.Code {
	case codes.Unavailable:
		return target == fserr.ErrUnavailable
	case codes.DeadlineExceeded:
		return target == context.DeadlineExceeded
	case codes.Canceled:
		return target == context.Canceled
	}
	return false
}

// GRPCStatus returns e as a status, so that status.Code(e) is its code.
func (e *TransportError) GRPCStatus() *status.Status { return status.New(e.Code, e.Msg) }

// transport translates a status that carries no Strata ErrorInfo.
func transport(st *status.Status) error {
	return &TransportError{Code: st.Code(), Msg: Cause(st.Code(), st.Message())}
}

// Cause words why a call failed with code and gRPC's message msg, without
// gRPC's wrapping: "connection refused", "connection reset by peer", "the
// connection was closed".
func Cause(code codes.Code, msg string) string {
	switch code {
	case codes.DeadlineExceeded:
		return "no answer in time"
	case codes.Canceled:
		return "canceled"
	}
	msg = strings.TrimPrefix(msg, "connection error: desc = ")
	msg = strings.Trim(msg, `"`)
	msg = strings.TrimPrefix(msg, "transport: ")
	msg = strings.TrimPrefix(msg, "Error while dialing: ")
	msg = strings.TrimPrefix(msg, "grpc: ")
	msg = strings.TrimPrefix(msg, "error reading from server: ")
	// "dial tcp 127.0.0.1:1: connect: connection refused", "error reading
	// from server: read tcp A->B: read: connection reset by peer": the last
	// words say it.
	if strings.HasPrefix(msg, "dial ") || strings.Contains(msg, " tcp ") || strings.Contains(msg, " unix ") {
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
	}
	switch {
	case strings.HasSuffix(msg, "EOF"):
		return "the connection was closed"
	case strings.Contains(msg, "produced zero addresses"):
		return "its host name has no address"
	case msg == "":
		return strings.ToLower(code.String())
	}
	return msg
}

// isTransport reports whether err was translated already.
func isTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}
