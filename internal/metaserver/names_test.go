package metaserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/rpcerr"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/testcluster"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// The service refuses new names that break the rule itself, whatever the
// client checked: the handlers are called here directly, as a client that
// checks nothing would, and with invalid UTF-8, which no gRPC client can
// send.
func TestServiceRefusesBadNewNames(t *testing.T) {
	svc := testcluster.StartInProcess(t, nil)
	ctx := svc.Context(t, "")
	s := svc.Server
	h := &pb.Header{User: testcluster.Superuser(), ClientName: "test"}
	if _, err := s.Mkdirs(ctx, &pb.MkdirsRequest{Header: h, Path: "/ok", Permission: 0o755, CreateParents: true}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(p string) error{
		"mkdirs": func(p string) error {
			_, err := s.Mkdirs(ctx, &pb.MkdirsRequest{Header: h, Path: p, Permission: 0o755, CreateParents: true})
			return err
		},
		"create": func(p string) error {
			_, err := s.Create(ctx, &pb.CreateRequest{Header: h, Path: p, Permission: 0o644, CreateParents: true, Complete: true})
			return err
		},
		"rename": func(p string) error {
			_, err := s.Rename(ctx, &pb.RenameRequest{Header: h, Src: "/ok", Dst: p})
			return err
		},
		"batched mkdirs": func(p string) error {
			r, err := s.Batch(ctx, &pb.BatchRequest{Calls: []*pb.BatchCall{{Call: &pb.BatchCall_Mkdirs{
				Mkdirs: &pb.MkdirsRequest{Header: h, Path: p, Permission: 0o755}}}}})
			if err != nil {
				return err
			}
			return batchError(t, r.Results[0])
		},
	} {
		for p, reason := range map[string]string{
			"/a:b":         "holds ':'",
			"/ok/nl\nx":    "control character U+000A",
			"/ok/tab\tx/y": "control character U+0009",
			"/bad\xffname": "not valid UTF-8",
			"/dbl//slash":  "two slashes in a row",
		} {
			err := rpcerr.FromStatus(call(p))
			if !errors.Is(err, fserr.ErrInvalidPath) || !strings.Contains(fspath.Reason(err), reason) {
				t.Errorf("%s %q: %v, want an invalid path that says %q", name, p, err, reason)
			}
		}
	}
	// Looking such a name up is no error: it may have come from elsewhere.
	if _, err := s.GetFileStatus(ctx, &pb.GetFileStatusRequest{Header: h, Path: "/a:b/nl\nx"}); !errors.Is(rpcerr.FromStatus(err), fserr.ErrNotFound) {
		t.Errorf("stat of a name with ':': %v, want not found", err)
	}
	l, err := s.List(ctx, &pb.ListRequest{Header: h, Path: "/"})
	if err == nil { // as a client receives it (the entries are pre-encoded)
		l, err = statemachine.WireForm(l)
	}
	if err != nil || len(l.Entries) != 1 || l.Entries[0].Name != "ok" {
		t.Fatalf("after the refusals / holds %v, %v; want only ok", l.GetEntries(), err)
	}
}
