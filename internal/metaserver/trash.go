package metaserver

import (
	"context"
	"errors"
	"path"
	"slices"
	"time"

	"github.com/stratafs/strata/internal/kv"
	"github.com/stratafs/strata/internal/namespace"
	sm "github.com/stratafs/strata/internal/statemachine"
	"github.com/stratafs/strata/internal/trash"
	pb "github.com/stratafs/strata/proto/strata/v1"
)

// trashCheckpoint is how often the emptier runs at most: HDFS's
// fs.trash.checkpoint.interval, which defaults to the trash interval; an
// hour at most here, so that what is deleted goes at most an hour after
// its time (HDFS's may stay twice its interval).
const trashCheckpoint = time.Hour

// trashPeriod is how often the leader empties the users' trash.
func (c *Config) trashPeriod() time.Duration {
	return min(c.TrashInterval, trashCheckpoint)
}

// EmptyTrash is HDFS's trash emptier, which the leader runs every
// checkpoint interval while the trash is on: in every namespace, in each
// user's trash (/user/*/.Trash), it deletes the checkpoints older than the
// trash interval, then makes Current a checkpoint named by the time
// (package trash). Its deletes and renames are commands like a client's,
// made as the superuser.
func (s *Server) EmptyTrash(ctx context.Context) error {
	if s.cfg.TrashInterval <= 0 || !s.isLeader() {
		return nil
	}
	now := s.cfg.Clock()
	var all []string
	if err := s.store.View(func(r kv.Reader) error {
		list, err := namespace.Namespaces(r)
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
		users, err := s.names(ns, trash.Home)
		failed = errors.Join(failed, err)
		for _, u := range users {
			failed = errors.Join(failed, s.emptyTrashOf(ctx, ns, path.Join(trash.Home, u, trash.Dir), now))
		}
	}
	return failed
}

// emptyTrashOf empties the trash at root in namespace ns, at time now.
func (s *Server) emptyTrashOf(ctx context.Context, ns, root string, now time.Time) error {
	entries, err := s.names(ns, root)
	if err != nil || len(entries) == 0 {
		return err
	}
	h := &pb.Header{User: s.cfg.Namespace.Superuser, Namespace: ns}
	for _, name := range trash.Expired(entries, now, s.cfg.TrashInterval) {
		p := path.Join(root, name)
		if _, err := s.propose(ctx, sm.Delete.Command(&pb.DeleteRequest{Header: h, Path: p, Recursive: true})); err != nil {
			return err
		}
		s.cfg.Log.Info("deleted trash checkpoint", "namespace", ns, "path", p)
	}
	if !slices.Contains(entries, trash.Current) {
		return nil
	}
	name := trash.CheckpointName(now, 0)
	for n := 1; slices.Contains(entries, name); n++ {
		name = trash.CheckpointName(now, n)
	}
	src, dst := path.Join(root, trash.Current), path.Join(root, name)
	_, err = s.propose(ctx, sm.Rename.Command(&pb.RenameRequest{Header: h, Src: src, Dst: dst, NoDescend: true}))
	if err == nil {
		s.cfg.Log.Info("created trash checkpoint", "namespace", ns, "path", dst)
	}
	return err
}

// names lists the names in directory dir of namespace ns, as the
// superuser sees them; none if dir is missing or not a directory.
func (s *Server) names(ns, dir string) ([]string, error) {
	c := namespace.Caller{User: s.cfg.Namespace.Superuser}
	var out []string
	err := s.store.View(func(r kv.Reader) error {
		for after := ""; ; {
			l, err := s.machine.FS().List(r, c, ns, dir, after, sm.MaxPage)
			if errors.Is(err, namespace.ErrNotFound) {
				return nil
			}
			if err != nil || !l.Self.IsDir() {
				return err
			}
			for _, n := range l.Entries {
				out = append(out, n.Name)
			}
			if !l.More {
				return nil
			}
			after = l.Entries[len(l.Entries)-1].Name
		}
	})
	return out, err
}
