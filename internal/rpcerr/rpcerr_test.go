package rpcerr

import (
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
	plain := status.Error(codes.Unavailable, "no leader")
	if got := FromStatus(plain); got != plain {
		t.Fatalf("status without details changed: %v", got)
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
