package rpcerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/fserr"
)

func TestRoundTrip(t *testing.T) {
	for _, e := range table {
		wrapped := fmt.Errorf("create /a/b: %w", e.err)
		back := FromStatus(ToStatus(wrapped))
		if !errors.Is(back, e.err) {
			t.Errorf("%s: came back as %v", e.reason, back)
		}
		if back.Error() != wrapped.Error() {
			t.Errorf("%s: message %q, want %q", e.reason, back.Error(), wrapped.Error())
		}
		if status.Code(ToStatus(wrapped)) != e.code {
			t.Errorf("%s: code %v", e.reason, status.Code(ToStatus(wrapped)))
		}
	}
}

func TestUnknownErrorsStayOpaque(t *testing.T) {
	if c := status.Code(ToStatus(errors.New("disk on fire"))); c != codes.Internal {
		t.Fatalf("code %v", c)
	}
	plain := status.Error(codes.Internal, "disk on fire")
	if got := FromStatus(plain); status.Code(got) != codes.Internal || got.Error() != "disk on fire" {
		t.Fatalf("status without details came back as %v", got)
	}
	if ToStatus(nil) != nil || FromStatus(nil) != nil {
		t.Fatal("nil is not nil")
	}
}

func TestNotLeaderCarriesTheLeader(t *testing.T) {
	back := FromStatus(ToStatus(fserr.NotLeader("10.0.0.2:7700")))
	if !errors.Is(back, fserr.ErrNotLeader) || fserr.LeaderOf(back) != "10.0.0.2:7700" {
		t.Fatalf("came back as %v (leader %q)", back, fserr.LeaderOf(back))
	}
	if status.Code(ToStatus(fserr.NotLeader(""))) != codes.Unavailable {
		t.Fatal("not UNAVAILABLE")
	}
	if back := FromStatus(ToStatus(fserr.NotLeader(""))); fserr.LeaderOf(back) != "" || !errors.Is(back, fserr.ErrNotLeader) {
		t.Fatalf("no leader came back as %v", back)
	}
}

// A message quoting a path that is not UTF-8 still makes a status that
// marshals, as a batch's results must.
func TestMessagesAreUTF8(t *testing.T) {
	st := status.Convert(ToStatus(fserr.Errorf(fserr.ErrInvalidPath, "mkdirs /bad\xffname: invalid path")))
	if _, err := proto.Marshal(st.Proto()); err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if back := FromStatus(st.Err()); !errors.Is(back, fserr.ErrInvalidPath) || back.Error() != "mkdirs /bad\uFFFDname: invalid path" {
		t.Fatalf("came back as %v", back)
	}
}

// A call that got no answer of a service is said in words, without gRPC's
// wrapping, and is still what it was for errors.Is and status.Code.
func TestTransportErrorsInWords(t *testing.T) {
	for _, c := range []struct {
		st   error
		want string
		is   error
	}{
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`),
			"connection refused", fserr.ErrUnavailable},
		{status.Error(codes.Unavailable, "error reading from server: EOF"),
			"the connection was closed", fserr.ErrUnavailable},
		{status.Error(codes.Unavailable, "error reading from server: read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer"),
			"connection reset by peer", fserr.ErrUnavailable},
		{status.Error(codes.Unavailable, "error reading from server: connection reset by peer"),
			"connection reset by peer", fserr.ErrUnavailable},
		{status.Error(codes.Unavailable, "name resolver error: produced zero addresses"),
			"its host name has no address", fserr.ErrUnavailable},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), "no answer in time", context.DeadlineExceeded},
		{status.Error(codes.Canceled, "context canceled"), "canceled", context.Canceled},
		{status.Error(codes.Internal, "grpc: error while marshaling: string field contains invalid UTF-8"),
			"error while marshaling: string field contains invalid UTF-8", nil},
	} {
		got := FromStatus(c.st)
		if got.Error() != c.want || status.Code(got) != status.Code(c.st) {
			t.Errorf("%v: came back as %q (%v), want %q", c.st, got, status.Code(got), c.want)
		}
		if c.is != nil && !errors.Is(got, c.is) {
			t.Errorf("%v: not %v", c.st, c.is)
		}
		if again := FromStatus(got); again != got {
			t.Errorf("%v: translated twice: %v", c.st, again)
		}
		var fe *fserr.Error
		if errors.As(got, &fe) {
			t.Errorf("%v: a transport failure became the service's answer %v", c.st, fe)
		}
	}
}
