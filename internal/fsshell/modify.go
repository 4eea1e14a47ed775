package fsshell

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/client"
	"github.com/stratafs/strata/internal/fserr"
)

// runMkdir is -mkdir [-p]: without -p the parent must exist and the path
// must not; with -p an existing directory is fine and parents are made.
func runMkdir(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "p")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if err := sh.mkdir(item, cf.opt("p")); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) mkdir(item *pathData, parents bool) error {
	switch {
	case item.isDir() && parents:
		return nil
	case item.isDir():
		return errPath(item.text, msgExists)
	case item.exists():
		return errPath(item.text, msgNotDir)
	}
	var err error
	if parents {
		_, err = sh.fs.Mkdirs(sh.ctx, item.uri(), 0o777)
	} else {
		_, err = sh.fs.Mkdir(sh.ctx, item.uri(), 0o777)
	}
	return sh.explain(item.text, item.abs, err)
}

// runRm is -rm [-f] [-r|-R] [-skipTrash]: each path goes to the user's
// trash when the service's trash is on (trash.go), and -skipTrash or a
// path in the trash already is deleted for good: "Deleted <path>".
func runRm(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "f", "r", "R", "skipTrash")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	force, recursive, skipTrash := cf.opt("f"), cf.opt("r") || cf.opt("R"), cf.opt("skipTrash")
	var items []*pathData
	for _, a := range args {
		got, err := sh.expand(a)
		if ue := (*usageError)(nil); errors.As(err, &ue) {
			return err
		}
		if err != nil {
			// NB: a path whose lookup failed (permission denied) is not
			// also reported missing: it is not removed at all.
			if !(force && isNotFound(err)) {
				sh.fail(err)
			}
			continue
		}
		items = append(items, got...)
	}
	for _, item := range items {
		if err := sh.rm(item, force, recursive, skipTrash); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) rm(item *pathData, force, recursive, skipTrash bool) error {
	switch {
	case !item.exists() && force:
		return nil
	case !item.exists():
		return errNotFound(item.text)
	case item.isDir() && !recursive:
		return errPath(item.text, msgIsDir)
	case item.abs == "/":
		return errRootDelete(item.text)
	}
	if !skipTrash {
		if moved, err := sh.moveToTrash(item); moved || err != nil {
			return err
		}
	}
	deleted, err := sh.fs.Delete(sh.ctx, item.uri(), recursive)
	switch {
	case errors.Is(err, fserr.ErrRoot):
		return errRootDelete(item.text)
	case err == nil && !deleted:
		return errPath(item.text, msgIO) // HDFS's delete answers false
	case err != nil:
		return sh.explain(item.text, item.abs, err)
	}
	sh.printf("Deleted %s\n", item.text)
	return nil
}

// errRootDelete refuses to delete a namespace's root. NB: HDFS's NameNode
// refuses it too but only says false, which FsShell prints as "rm: `/':
// Input/output error" (or, with the trash on, that "/" contains the trash);
// the reason is what HDFS logs ("the root is not allowed to be deleted").
func errRootDelete(text string) error {
	return fmt.Errorf("Cannot delete %s: the root directory is not allowed to be deleted", text)
}

func isNotFound(err error) bool {
	var pe *pathError
	return errors.As(err, &pe) && pe.msg == msgNotFound
}

// runRmdir is -rmdir [--ignore-fail-on-non-empty]: removes empty
// directories only.
func runRmdir(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "-ignore-fail-on-non-empty")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	ignore := cf.opt("-ignore-fail-on-non-empty")
	for _, item := range sh.expandAll(args) {
		if err := sh.rmdir(item, ignore); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) rmdir(item *pathData, ignoreNonEmpty bool) error {
	switch {
	case !item.exists():
		return errNotFound(item.text)
	case !item.isDir():
		return errPath(item.text, msgNotDir)
	}
	notEmpty, deleted := item.st.Children > 0, false
	var err error
	if !notEmpty {
		deleted, err = sh.fs.Delete(sh.ctx, item.uri(), false)
		notEmpty = errors.Is(err, fserr.ErrNotEmpty)
	}
	switch {
	case notEmpty && ignoreNonEmpty:
		return nil
	case notEmpty:
		return errPath(item.text, msgNotEmpty)
	case errors.Is(err, fserr.ErrRoot), err == nil && !deleted:
		return errPath(item.text, msgIO)
	}
	return sh.explain(item.text, item.abs, err)
}

// remoteDestination is CommandWithDestination.getRemoteDestination: the
// last argument, which may be a pattern matching one path.
func (sh *shell) remoteDestination(arg string) (*pathData, error) {
	items, err := sh.expand(arg)
	if err != nil {
		return nil, err
	}
	if len(items) > 1 {
		return nil, errPath(arg, "Too many matches")
	}
	return items[0], nil
}

// dest is what CommandWithDestination.processArguments checks of a
// destination, local or remote.
type dest struct {
	text          string
	exists, isDir bool
	parentExists  func() bool
	qualified     string // the fully qualified path a missing parent's error names, if any
}

func (sh *shell) remoteDest(p *pathData) dest {
	return dest{p.text, p.exists(), p.isDir(), func() bool { return sh.existsRemote(p.parentOrSelf()) },
		sh.qualified(p.ns, p.abs)}
}

// checkDestination: several sources need an existing directory; one source
// needs a directory, a path that is not there (whose parent is), or -f.
func checkDestination(d dest, sources int, overwrite bool) error {
	switch {
	case sources > 1 && !d.exists:
		return errNotFound(d.text)
	case sources > 1 && !d.isDir:
		return errPath(d.text, msgNotDir)
	case d.exists && !d.isDir && !overwrite:
		return errPath(d.text, msgExists)
	case !d.exists && !d.parentExists() && d.qualified != "":
		// Hadoop's PathNotFoundException.withFullyQualifiedPath.
		return errPath(d.text, msgNotFound+": `"+d.qualified+"'")
	case !d.exists && !d.parentExists():
		return errNotFound(d.text)
	}
	return nil
}

// parentOrSelf is what PathData.parentExists looks at: the path itself
// when written as a directory ("a/", "."), else its parent.
func (p *pathData) parentOrSelf() *pathData {
	if p.representsDir() {
		return p
	}
	return &pathData{text: p.text, ns: p.ns, abs: path.Dir(p.abs)}
}

// existsRemote reports whether p exists in the file system.
func (sh *shell) existsRemote(p *pathData) bool {
	st, err := sh.stat(p)
	return err == nil && st != nil
}

// targetOf is CommandWithDestination.getTargetPath for a command-line
// source: into dst when dst is a directory (or written as one), else dst.
func targetOf(src, dst *pathData) *pathData {
	if dst.isDir() || dst.representsDir() {
		return dst.childNamed(src.name())
	}
	return dst
}

// runMv is -mv <src> ... <dst>: one atomic rename per source.
func runMv(sh *shell, args []string) error {
	cf := newFormat(2, unbounded)
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	dst, err := sh.remoteDestination(args[len(args)-1])
	if err != nil {
		return err
	}
	srcs := sh.expandAll(args[:len(args)-1])
	if err := checkDestination(sh.remoteDest(dst), len(srcs), false); err != nil {
		return err
	}
	for _, src := range srcs {
		if err := sh.move(src, dst); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) move(src, dst *pathData) error {
	if !src.exists() {
		return errNotFound(src.text)
	}
	if sh.nsName(src) != sh.nsName(dst) {
		return errPath(src.text, "Does not match target filesystem")
	}
	target := targetOf(src, dst)
	if err := checkNotInside(src, target); err != nil {
		return err
	}
	err := sh.fs.Rename2(sh.ctx, src.uri(), target.uri(), false)
	switch {
	case errors.Is(err, fserr.ErrExists):
		return errPath(target.text, msgExists)
	case errors.Is(err, fserr.ErrRenameLoop):
		return &pathError{path: src.text, target: target.text, msg: "is a subdirectory of itself"}
	case errors.Is(err, fserr.ErrRoot):
		return errPath(src.text, msgIO)
	case errors.Is(err, fserr.ErrInvalidPath):
		return errInvalidPath(target.text, err) // src exists: the new name is refused
	}
	return sh.explain(src.text, src.abs, err)
}

// checkNotInside refuses to move or copy directory src to target when
// target is src or below it (CommandWithDestination.processPathArgument).
// Both must be in the same namespace.
func checkNotInside(src, target *pathData) error {
	switch {
	case !src.isDir():
		return nil
	case target.abs == src.abs:
		return &pathError{path: src.text, target: target.text, msg: "are identical"}
	case strings.HasPrefix(target.abs, strings.TrimSuffix(src.abs, "/")+"/"):
		return &pathError{path: src.text, target: target.text, msg: "is a subdirectory of itself"}
	}
	return nil
}

// nsName is the namespace p is in.
func (sh *shell) nsName(p *pathData) string {
	if p.ns == "" {
		return sh.fs.Namespace()
	}
	return p.ns
}

// runTouchz is -touchz: creates empty files; an existing file must be
// empty, and is created anew.
func runTouchz(sh *shell, args []string) error {
	cf := newFormat(1, unbounded)
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		switch {
		case item.isDir():
			err = errPath(item.text, msgIsDir)
		case item.exists() && item.st.Length != 0:
			err = errPath(item.text, "Not a zero-length file")
		default:
			err = sh.createEmpty(item)
		}
		if err != nil {
			sh.fail(err)
		}
	}
	return nil
}

// createEmpty creates an empty file whose parent must exist.
func (sh *shell) createEmpty(item *pathData) error {
	err := sh.fs.WriteFile(sh.ctx, item.uri(), nil, client.CreateOptions{Overwrite: true, NonRecursive: true})
	return sh.explain(item.text, item.abs, err)
}

// runTruncate is -truncate: each matching file cut to length, at once
// (Strata keeps the block the cut falls in, read up to the cut, so there
// is no block recovery to wait for, and -w changes nothing).
func runTruncate(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "w")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	length, err := strconv.ParseUint(args[0], 10, 63)
	if err != nil {
		return usagef("Illegal length %s", args[0])
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args[1:]) {
		switch {
		case item.isDir():
			err = errPath(item.text, msgIsDir)
		case !item.exists():
			err = errNotFound(item.text)
		case item.st.Length < length:
			err = errPath(item.text, fmt.Sprintf("Cannot truncate to a larger file size. Current size: %d, truncate size: %d.",
				item.st.Length, length))
		default:
			err = sh.explain(item.text, item.abs, sh.fs.Truncate(sh.ctx, item.uri(), length))
		}
		if err != nil {
			sh.fail(err)
			continue
		}
		sh.printf("Truncated %s to length: %d\n", item.text, length)
	}
	return nil
}
