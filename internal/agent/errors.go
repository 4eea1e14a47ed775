package agent

import (
	"context"
	"errors"

	"github.com/stratafs/strata/internal/fserr"
)

// errArg is a request the agent refuses as malformed: a missing handle, a
// range outside the shared memory. Its condition is invalid_argument.
var errArg = fserr.ErrInvalidArgument

// conds names each condition on the wire: the one mapping of the agent's
// boundary (python/strata/_errors.py maps the names to exceptions).
var conds = []struct {
	err  error
	name string
}{
	{fserr.ErrNotFound, "not_found"},
	{fserr.ErrExists, "exists"},
	{fserr.ErrPermission, "permission"},
	{fserr.ErrNotDir, "not_dir"},
	{fserr.ErrIsDir, "is_dir"},
	{fserr.ErrParentNotDir, "parent_not_dir"},
	{fserr.ErrNotEmpty, "not_empty"},
	{fserr.ErrInvalidPath, "invalid_path"},
	{fserr.ErrInvalidArgument, "invalid_argument"},
	{fserr.ErrLeaseConflict, "lease_conflict"},
	{fserr.ErrNoLease, "no_lease"},
	{fserr.ErrRenameLoop, "rename_loop"},
	{fserr.ErrRoot, "root"},
	{fserr.ErrNoNamespace, "no_namespace"},
	{fserr.ErrUnsupported, "unsupported"},
	{fserr.ErrChanged, "changed"},
	{fserr.ErrUnauthenticated, "unauthenticated"},
	{fserr.ErrUnavailable, "unavailable"},
	{context.DeadlineExceeded, "timeout"},
}

// condOf names err's condition: "io" when it has none of conds.
func condOf(err error) string {
	for _, c := range conds {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "io"
}
