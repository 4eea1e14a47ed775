package fsshell

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
	"github.com/stratafs/strata/internal/trash"
)

// The trash of -rm, as HDFS's TrashPolicyDefault keeps it (package trash):
// with the service's trash interval above zero, -rm moves each path to
// /user/<user>/.Trash/Current/<path> in its namespace instead of deleting
// it, and the service's leader deletes it once the interval is over.

// trashInterval returns the service's trash interval (0: the trash is
// off), asked once per command.
func (sh *shell) trashInterval() (time.Duration, error) {
	if sh.trash == nil {
		d, err := sh.fs.ServerDefaults(sh.ctx)
		if err != nil {
			return 0, err
		}
		interval := time.Duration(d.GetTrashIntervalMs()) * time.Millisecond
		sh.trash = &interval
	}
	return *sh.trash, nil
}

// moveToTrash moves item to the user's trash if the trash is on, and
// reports whether it did (HDFS's Trash.moveToAppropriateTrash). A path in
// the trash already is not moved: -rm deletes it for good. A path that
// holds the trash is refused, as HDFS refuses it.
func (sh *shell) moveToTrash(item *pathData) (bool, error) {
	interval, err := sh.trashInterval()
	user := sh.user()
	switch {
	case err != nil || interval <= 0 || trash.Within(item.abs, user):
		return false, err
	case trash.Contains(item.abs, user):
		return false, fmt.Errorf("Cannot move \"%s\" to the trash, as it contains the trash. Consider using -skipTrash option",
			sh.qualified(item.ns, item.abs))
	}
	target := trash.Target(user, item.abs)
	// The home directory, if missing, as a home is (0755); the trash below
	// it as HDFS makes it, the user's alone (0700).
	if _, err := sh.fs.Mkdirs(sh.ctx, uriOf(item.ns, path.Join(trash.Home, user)), 0o755); err != nil {
		return false, sh.trashFailure(item, err)
	}
	if _, err := sh.fs.Mkdirs(sh.ctx, uriOf(item.ns, path.Dir(target)), 0o700); err != nil {
		return false, sh.trashFailure(item, err)
	}
	// A path deleted before under the same name keeps its place: the new
	// one gets the time appended, as in HDFS.
	dst := target
	err = sh.fs.Rename2(sh.ctx, item.uri(), uriOf(item.ns, dst), false)
	if errors.Is(err, fserr.ErrExists) {
		dst = target + strconv.FormatInt(sh.now().UnixMilli(), 10)
		err = sh.fs.Rename2(sh.ctx, item.uri(), uriOf(item.ns, dst), false)
	}
	if err != nil {
		return false, sh.trashFailure(item, err)
	}
	sh.printf("Moved: '%s' to trash at: %s\n", sh.qualified(item.ns, item.abs), sh.qualified(item.ns, dst))
	return true, nil
}

// trashFailure is HDFS's message when a path could not be moved to the
// trash: nothing was deleted.
func (sh *shell) trashFailure(item *pathData, err error) error {
	return fmt.Errorf("Failed to move to trash: %s: %s. Consider using -skipTrash option",
		sh.qualified(item.ns, item.abs), message(sh.explain(item.text, item.abs, err)))
}

// qualified is a path with its namespace, as HDFS qualifies paths in its
// trash messages: strata://ns/abs.
func (sh *shell) qualified(ns, abs string) string {
	if ns == "" {
		ns = sh.fs.Namespace()
	}
	return client.Scheme + ns + abs
}

// runExpunge is -expunge [-immediate] [-fs <path>]: in the user's trash (in
// the namespace of -fs's path, or the client's), it deletes the checkpoints
// older than the trash interval and makes Current a checkpoint, as the
// service's emptier does; -immediate deletes everything in the trash.
func runExpunge(sh *shell, args []string) error {
	fsArg, args, _, err := popOptionWithArgument("-fs", args)
	if err != nil {
		return err
	}
	cf := newFormat(0, 0, "immediate")
	if _, err := cf.parse(args); err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	root := &pathData{abs: trash.Root(sh.user())}
	if fsArg != "" {
		p, _, err := sh.resolve(fsArg)
		if err != nil {
			return err
		}
		root.ns = p.ns
	}
	root.text = sh.qualified(root.ns, root.abs)
	return sh.expunge(root, cf.opt("immediate"))
}

func (sh *shell) expunge(root *pathData, immediate bool) error {
	interval, err := sh.trashInterval()
	if err != nil {
		return err
	}
	entries, err := sh.fs.ReadDir(sh.ctx, root.uri())
	if errors.Is(err, fserr.ErrNotFound) {
		return nil // no trash: nothing to expunge
	}
	if err != nil {
		return sh.explain(root.text, root.abs, err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	now := sh.now()
	doomed := trash.Expired(names, now, interval)
	if immediate {
		doomed = names
	}
	for _, name := range doomed {
		p := root.childNamed(name)
		if _, err := sh.fs.Delete(sh.ctx, p.uri(), true); err != nil {
			return sh.explain(p.text, p.abs, err)
		}
		sh.printf("Deleted trash checkpoint: %s\n", p.abs)
	}
	if immediate || !slices.Contains(names, trash.Current) {
		return nil
	}
	return sh.checkpoint(root, names, now)
}

// checkpoint renames the trash's Current to a checkpoint named by time
// now, with a suffix if that name is taken.
func (sh *shell) checkpoint(root *pathData, names []string, now time.Time) error {
	name := trash.CheckpointName(now, 0)
	for n := 1; slices.Contains(names, name); n++ {
		name = trash.CheckpointName(now, n)
	}
	cur, cp := root.childNamed(trash.Current), root.childNamed(name)
	if err := sh.fs.Rename2(sh.ctx, cur.uri(), cp.uri(), false); err != nil {
		return sh.explain(cur.text, cur.abs, err)
	}
	sh.printf("Created trash checkpoint: %s\n", cp.abs)
	return nil
}
