package upkeep

import (
	"context"
	"errors"
	"log/slog"
	"path"
	"slices"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/trash"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// trashCheckpoint is how often the emptier runs at most: HDFS's
// fs.trash.checkpoint.interval, which defaults to the trash interval; an
// hour at most here, so that what is deleted goes at most an hour after
// its time (HDFS's may stay twice its interval).
const trashCheckpoint = time.Hour

// TrashPeriod is how often the leader empties the users' trash when
// they keep what they delete for interval (0: the trash is off, and the
// emptier has nothing to do).
func TrashPeriod(interval time.Duration) time.Duration {
	if interval <= 0 {
		return trashCheckpoint
	}
	return min(interval, trashCheckpoint)
}

// Emptier is HDFS's trash emptier.
type Emptier struct {
	Replica Replica
	Machine *statemachine.Machine // reads the trash directories
	// Interval is how long the users' trash keeps what they delete
	// (HDFS's fs.trash.interval).
	Interval time.Duration
	Log      *slog.Logger
}

// Run empties the trash: in every namespace, in each user's trash
// (/user/*/.Trash), it deletes the checkpoints older than the trash
// interval, then makes Current a checkpoint named by the time (package
// trash). Its deletes and renames are commands like a client's, made as
// the superuser.
func (e *Emptier) Run(ctx context.Context) error {
	if e.Interval <= 0 || !e.Replica.IsLeader() {
		return nil
	}
	now := e.Replica.Now()
	var all []string
	if err := e.Replica.Applied(func(r kv.Reader) error {
		list, err := statemachine.Namespaces(r)
		for _, ns := range list {
			if !ns.InTrash() {
				all = append(all, ns.Name)
			}
		}
		return err
	}); err != nil {
		return err
	}
	var failed error
	for _, ns := range all {
		users, err := e.names(ns, trash.Home)
		failed = errors.Join(failed, err)
		for _, u := range users {
			failed = errors.Join(failed, e.emptyTrashOf(ctx, ns, path.Join(trash.Home, u, trash.Dir), now))
		}
	}
	return failed
}

// emptyTrashOf empties the trash at root in namespace ns, at time now.
func (e *Emptier) emptyTrashOf(ctx context.Context, ns, root string, now time.Time) error {
	entries, err := e.names(ns, root)
	if err != nil || len(entries) == 0 {
		return err
	}
	h := &pb.Header{User: e.superuser(), Namespace: ns}
	for _, name := range trash.Expired(entries, now, e.Interval) {
		p := path.Join(root, name)
		if _, err := e.Replica.Propose(ctx, statemachine.Delete.Command(&pb.DeleteRequest{Header: h, Path: p, Recursive: true})); err != nil {
			return err
		}
		e.Log.Info("deleted trash checkpoint", "namespace", ns, "path", p)
	}
	if !slices.Contains(entries, trash.Current) {
		return nil
	}
	name := trash.CheckpointName(now, 0)
	for n := 1; slices.Contains(entries, name); n++ {
		name = trash.CheckpointName(now, n)
	}
	src, dst := path.Join(root, trash.Current), path.Join(root, name)
	_, err = e.Replica.Propose(ctx, statemachine.Rename.Command(&pb.RenameRequest{Header: h, Src: src, Dst: dst, NoDescend: true}))
	if err == nil {
		e.Log.Info("created trash checkpoint", "namespace", ns, "path", dst)
	}
	return err
}

func (e *Emptier) superuser() string { return e.Machine.Config().Superuser }

// names lists the names in directory dir of namespace ns, as the
// superuser sees them; none if dir is missing or not a directory.
func (e *Emptier) names(ns, dir string) (out []string, err error) {
	err = e.Replica.Applied(func(r kv.Reader) error {
		out, err = e.Machine.Names(r, statemachine.Caller{User: e.superuser()}, ns, dir)
		return err
	})
	return out, err
}
