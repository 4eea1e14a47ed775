package upkeep

import (
	"context"
	"log/slog"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/kvschema"
	"github.com/stratafs/strata/internal/statemachine"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// Purge returns the job that proposes purge commands of at most batch
// inodes each until nothing detached is left, so that a huge recursive
// delete is removed in bounded commands, one after the other, and never
// holds the log for long.
func Purge(r Replica, batch int) func(context.Context) error {
	return func(ctx context.Context) error {
		return proposeWhile(ctx, r, statemachine.PurgePending, func() *pb.Command {
			return statemachine.Purge.Command(&pb.PurgeCommand{Limit: uint32(batch)})
		})
	}
}

// RequestMemory is statemachine.RequestMemory: how long the answers of
// applied requests are kept for their retries.
const RequestMemory = statemachine.RequestMemory

// ForgetRequests returns the job that drops the answers kept for longer
// than RequestMemory, in bounded commands.
func ForgetRequests(r Replica) func(context.Context) error {
	return func(ctx context.Context) error {
		const batch = 10000
		before := r.Now().Add(-RequestMemory).UnixMilli()
		return proposeWhile(ctx, r, func(rd kv.Reader) (bool, error) { return statemachine.RequestsBefore(rd, before) },
			func() *pb.Command {
				return statemachine.ForgetRequests.Command(&pb.ForgetRequestsCommand{Before: before, Limit: batch})
			})
	}
}

// proposeWhile proposes a command cmd makes, again and again, while this
// member leads and pending says work is left in the applied state.
func proposeWhile(ctx context.Context, r Replica, pending func(kv.Reader) (bool, error), cmd func() *pb.Command) error {
	for r.IsLeader() {
		var left bool
		if err := r.Applied(func(rd kv.Reader) (err error) {
			left, err = pending(rd)
			return err
		}); err != nil || !left {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := r.Propose(ctx, cmd()); err != nil {
			return err
		}
	}
	return nil
}

// PurgeNamespaces returns the job that removes for good, one command each,
// the namespaces whose time in the trash is over. Their content then goes
// as any deleted tree's does (purge commands, and the block collector for
// their buckets' objects).
func PurgeNamespaces(r Replica, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		if !r.IsLeader() {
			return nil
		}
		var expired []*kvschema.Namespace
		if err := r.Applied(func(rd kv.Reader) (err error) {
			expired, err = statemachine.ExpiredNamespaces(rd, r.Now().UnixMilli())
			return err
		}); err != nil {
			return err
		}
		for _, ns := range expired {
			cmd := statemachine.PurgeNamespace.Command(&pb.PurgeNamespaceCommand{Name: ns.Name, Deleted: ns.Deleted})
			res, err := r.Propose(ctx, cmd)
			if err != nil {
				return err
			}
			if statemachine.PurgeNamespace.Result(res) {
				log.Info("namespace removed for good after its time in the trash", "namespace", ns.Name,
					"deleted", statemachine.Stamp(ns.Deleted), "bucket", ns.StoreURI)
			}
		}
		return nil
	}
}
