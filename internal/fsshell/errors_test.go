package fsshell

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/rpcerr"
)

// A temporary condition of the data path is shown whole, its cause
// included, after the path; a namespace service that cannot be reached is
// shown as it is (once for all paths, by fail).
func TestUnavailableKeepsItsCause(t *testing.T) {
	sh := &shell{}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fserr.Errorf(fserr.ErrUnavailable, "read /f: no worker could serve block 01: worker w-1 at 127.0.0.1:1: the bucket is unavailable: connection refused"),
			"`/f': read /f: no worker could serve block 01: worker w-1 at 127.0.0.1:1: the bucket is unavailable: connection refused"},
		{fserr.Errorf(fserr.ErrUnavailable, "no live workers (the namespace service's leader has heard from none; waited 3s): start one"),
			"`/f': no live workers (the namespace service's leader has heard from none; waited 3s): start one"},
		{&rpcerr.TransportError{Code: codes.Unavailable, Msg: "cannot reach the namespace service at 127.0.0.1:1: connection refused"},
			"cannot reach the namespace service at 127.0.0.1:1: connection refused"},
	} {
		if got := message(sh.explain("/f", "/f", tc.err)); got != tc.want {
			t.Errorf("%v:\n got %s\nwant %s", tc.err, got, tc.want)
		}
	}
}
