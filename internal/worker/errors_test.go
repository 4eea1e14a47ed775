package worker

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/object"
	"github.com/stratafs/strata/internal/rpcerr"
)

// A bucket failure that may pass reaches clients as UNAVAILABLE with its
// cause; other failures keep their class.
func TestBucketFailuresAreUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code codes.Code
	}{
		{object.WrapError(object.OpGet, "b/1", fmt.Errorf("%w: 503 down for the test", object.ErrTransient)), codes.Unavailable},
		{object.WrapError(object.OpPut, "b/1", fmt.Errorf("%w: down for the test", object.ErrThrottled)), codes.Unavailable},
		{fmt.Errorf("read b/1 at 0: down for the test: %w", syscall.ECONNREFUSED), codes.Unavailable},
		{fmt.Errorf("upload: %w", object.WrapError(object.OpPut, "b/1", fmt.Errorf("%w: down for the test", object.ErrTimeout))), codes.Unavailable},
		{fserr.Errorf(fserr.ErrNotFound, "read: block b/1 is missing from the bucket (down for the test)"), codes.NotFound},
		{object.WrapError(object.OpGet, "b/1", fmt.Errorf("%w: down for the test", object.ErrInvalidRange)), codes.Internal},
		{errors.New("down for the test"), codes.Internal},
	} {
		got := bucketUnavailable(tc.err)
		st := status.Convert(rpcerr.ToStatus(got))
		if st.Code() != tc.code || !strings.Contains(st.Message(), "down for the test") {
			t.Errorf("%v: %v %q, want %v with the cause", tc.err, st.Code(), st.Message(), tc.code)
		}
		if back := rpcerr.FromStatus(st.Err()); (tc.code == codes.Unavailable) != errors.Is(back, fserr.ErrUnavailable) {
			t.Errorf("%v: the client reads %v", tc.err, back)
		}
	}
}
