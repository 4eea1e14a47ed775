package fsshell

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

// A temporary condition is shown whole, its cause included (its message
// names the operation and the path), on one line.
func TestUnavailableKeepsItsCause(t *testing.T) {
	sh := &shell{}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fserr.Errorf(fserr.ErrUnavailable, "read /f: no worker could serve block 01: worker w-1 at 127.0.0.1:1: the bucket is unavailable: connection refused"),
			"read /f: no worker could serve block 01: worker w-1 at 127.0.0.1:1: the bucket is unavailable: connection refused"},
		{fserr.Errorf(fserr.ErrUnavailable, "write /f: no live workers (the namespace service's leader has heard from none; waited 3s): start one"),
			"write /f: no live workers (the namespace service's leader has heard from none; waited 3s): start one"},
		{&rpcerr.TransportError{Code: codes.Unavailable, Msg: "cannot reach the namespace service at 127.0.0.1:1: connection refused"},
			"cannot reach the namespace service at 127.0.0.1:1: connection refused"},
	} {
		if got := message(sh.explain("/f", "/f", tc.err)); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.err, got, tc.want)
		}
	}
}
