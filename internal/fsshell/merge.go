package fsshell

import (
	"os"
	"slices"
)

// runMoveFromLocal is -moveFromLocal, Hadoop's MoveCommands.MoveFromLocal:
// -put, then each local source that was copied whole is removed (a
// directory when emptied), and a directory is not merged into an existing
// one.
func runMoveFromLocal(sh *shell, args []string) error {
	if slices.Contains(args, "-t") {
		return usagef("Illegal option -t") // Hadoop's -put has it, its move not yet
	}
	return put(sh, args, true)
}

// runMoveToLocal is -moveToLocal, which Hadoop 3.4 has not implemented: it
// says so and fails, as Hadoop does (use -get then -rm).
func runMoveToLocal(*shell, []string) error {
	return errorString("Option '-moveToLocal' is not implemented yet.")
}

type errorString string

func (e errorString) Error() string { return string(e) }

// runGetmerge is -getmerge [-nl] [-skip-empty-file] <src> <localdst>,
// Hadoop's CopyCommands.Merge: the files the sources match (a directory's
// own files, not its subdirectories') one after another into one local
// file, each followed by a newline with -nl (not an empty one, with
// -skip-empty-file). Nothing is written if a source is missing.
func runGetmerge(sh *shell, args []string) error {
	cf := newFormat(2, unbounded, "nl", "skip-empty-file")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	dstArg, args := args[len(args)-1], args[:len(args)-1]
	if fi, err := os.Stat(dstArg); err == nil && fi.IsDir() {
		return errPath(dstArg, msgIsDir)
	}
	if err := sh.connect(); err != nil {
		return err
	}
	var srcs []*pathData
	missing := false
	for _, item := range sh.expandAll(args) {
		switch {
		case !item.exists():
			sh.fail(errNotFound(item.text))
			missing = true
		case item.isDir():
			sh.eachChild(item, func(c *pathData) {
				if !c.isDir() {
					srcs = append(srcs, c)
				}
			})
		default:
			srcs = append(srcs, item)
		}
	}
	if missing || sh.numErrors > 0 {
		return nil
	}
	return sh.merge(srcs, dstArg, cf.opt("nl"), cf.opt("skip-empty-file"))
}

func (sh *shell) merge(srcs []*pathData, dst string, nl, skipEmpty bool) error {
	f, err := os.Create(dst)
	if err != nil {
		return localError(dst, err)
	}
	defer f.Close()
	for _, src := range srcs {
		if src.st.Length > 0 {
			r, err := sh.fs.Open(sh.ctx, src.uri())
			if err != nil {
				return sh.explain(src.text, src.abs, err)
			}
			_, err = sh.transfer(f, r, int64(src.st.Length), src.text)
			r.Close()
			if err != nil {
				return sh.explain(src.text, src.abs, err)
			}
		} else if skipEmpty {
			continue
		}
		if nl {
			if _, err := f.WriteString("\n"); err != nil {
				return localError(dst, err)
			}
		}
	}
	if err := f.Close(); err != nil {
		return localError(dst, err)
	}
	return nil
}
