package rpcerr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "OK"},
		{fserr.Errorf(fserr.ErrNotFound, "x"), "NOT_FOUND"},
		{fmt.Errorf("wrapped: %w", fserr.NotLeader("a:1")), "NOT_LEADER"},
		{rpcerr.ToStatus(fserr.Errorf(fserr.ErrPermission, "x")), "PERMISSION_DENIED"},
		{status.Error(codes.ResourceExhausted, "too big"), "RESOURCE_EXHAUSTED"},
		{status.Error(codes.DeadlineExceeded, "late"), "DEADLINE_EXCEEDED"},
		{context.Canceled, "CANCELED"},
		{errors.New("boom"), "INTERNAL"},
	} {
		if got := rpcerr.Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// A batch result's serialized status means what the status alone did.
func TestUnmarshal(t *testing.T) {
	st, _ := status.FromError(rpcerr.ToStatus(fserr.Errorf(fserr.ErrExists, "f exists")))
	b, err := proto.Marshal(st.Proto())
	if err != nil {
		t.Fatal(err)
	}
	if err := rpcerr.Unmarshal(b); !errors.Is(err, fserr.ErrExists) || err.Error() != "f exists" {
		t.Fatalf("Unmarshal = %v", err)
	}
	if err := rpcerr.Unmarshal([]byte{0xff}); status.Code(err) != codes.Internal {
		t.Fatalf("Unmarshal(garbage) = %v", err)
	}
}
