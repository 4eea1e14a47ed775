package rpcerr

import (
	"context"
	"errors"
	"strings"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Reason names err's condition in a word, as its status's ErrorInfo reason
// would ("NOT_FOUND", "NOT_LEADER"): the class of a failed call in the
// services' metrics. A status without one is named by its code
// ("UNAVAILABLE", "DEADLINE_EXCEEDED"), the caller's end by
// context's ("CANCELED", "DEADLINE_EXCEEDED"), anything else "INTERNAL",
// and no error "OK". The set is small and fixed: a metric's label may
// hold it.
func Reason(err error) string {
	if err == nil {
		return "OK"
	}
	for _, e := range table {
		if errors.Is(err, e.err) {
			return e.reason
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "CANCELED"
	case errors.Is(err, context.DeadlineExceeded):
		return "DEADLINE_EXCEEDED"
	}
	if st, ok := status.FromError(err); ok {
		if e := FromStatus(err); e != err {
			for _, t := range table {
				if errors.Is(e, t.err) {
					return t.reason
				}
			}
		}
		return codeName(st.Code())
	}
	return "INTERNAL"
}

// codeName is a code's name as the gRPC docs spell it.
func codeName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELED"
	}
	var b strings.Builder
	name := c.String()
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// Unmarshal returns the error a serialized google.rpc.Status stands for (a
// batch result's), as FromStatus translates it.
func Unmarshal(b []byte) error {
	st := &spb.Status{}
	if err := proto.Unmarshal(b, st); err != nil {
		return status.Errorf(codes.Internal, "a serialized status: %v", err)
	}
	return FromStatus(status.ErrorProto(st))
}
