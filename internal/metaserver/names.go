package metaserver

import (
	"github.com/stratafs/strata/internal/fspath"
	"github.com/stratafs/strata/internal/namespace"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// checkNewNames checks the path whose missing components req may create
// (a create's, a mkdirs', a rename's destination) against the rule for new
// names (fspath.SplitNew: no ':', no control character). It runs at the
// door, on the leader, before anything is proposed: a check inside the
// state machine would apply commands already in the log differently from
// the members that applied them before the rule existed.
func checkNewNames(req request) error {
	var op, p string
	switch r := req.(type) {
	case *pb.MkdirsRequest:
		op, p = "mkdirs", r.GetPath()
	case *pb.CreateRequest:
		op, p = "create", r.GetPath()
	case *pb.RenameRequest:
		op, p = "rename to", r.GetDst()
	default:
		return nil
	}
	if _, err := fspath.SplitNew(p); err != nil {
		return &namespace.PathError{Op: op, Path: p, Err: err}
	}
	return nil
}
