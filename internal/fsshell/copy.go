package fsshell

import (
	"errors"
	"io"
	"os"

	"github.com/stratafs/strata/internal/client"
)

// copyingSuffix names the file a copy writes before renaming it into place,
// so that a reader never sees half a file (Hadoop's "._COPYING_").
const copyingSuffix = "._COPYING_"

// runCat is -cat: each file's content to standard output, streamed.
func runCat(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "ignoreCrc")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	for _, item := range sh.expandAll(args) {
		if err := sh.cat(item); err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (sh *shell) cat(item *pathData) error {
	switch {
	case !item.exists():
		return errNotFound(item.text)
	case item.isDir():
		return errPath(item.text, msgIsDir)
	}
	r, err := sh.fs.Open(sh.ctx, item.uri())
	if err != nil {
		return sh.explain(item.text, item.abs, err)
	}
	defer r.Close()
	if _, err := io.Copy(sh.out, r); err != nil {
		return sh.explain(item.text, item.abs, err)
	}
	return nil
}

// runAppendToFile is -appendToFile, which Strata cannot do yet.
func runAppendToFile(sh *shell, args []string) error {
	if len(args) < 2 {
		return errors.New("missing destination argument")
	}
	return errPath(args[len(args)-1], msgUnsupported+": Strata files are written once; appending is not implemented yet")
}

// copyFlags are the options -put and -get share.
type copyFlags struct {
	overwrite, preserve, direct bool
}

// runPut is -put and -copyFromLocal: local files and directories
// (recursively) into the file system, each written to <dst>._COPYING_ and
// renamed into place. Everything is streamed through client.Create.
func runPut(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "f", "p", "l", "d")
	args, err := cf.parse(args)
	if err != nil {
		return err
	}
	if err := sh.connect(); err != nil {
		return err
	}
	dstArg := "."
	if len(args) > 1 {
		dstArg, args = args[len(args)-1], args[:len(args)-1]
	}
	dst, err := sh.remoteDestination(dstArg)
	if err != nil {
		return err
	}
	c := &putCmd{sh: sh, copyFlags: copyFlags{overwrite: cf.opt("f"), preserve: cf.opt("p"), direct: cf.opt("d")}}
	if len(args) == 1 && args[0] == "-" {
		return c.fromStdin(dst)
	}
	if err := checkDestination(sh.remoteDest(dst), len(args), c.overwrite); err != nil {
		return err
	}
	c.all(args, dst)
	return nil
}

type putCmd struct {
	sh *shell
	copyFlags
}

// fromStdin is "-put - dst": standard input into dst (or, as in Hadoop, a
// file called "-" in dst when dst is a directory).
func (c *putCmd) fromStdin(dst *pathData) error {
	target, err := c.target("-", dst, 0)
	if err != nil {
		return err
	}
	return c.upload(c.sh.stdin, target)
}

// all copies each local source into dst.
func (c *putCmd) all(args []string, dst *pathData) {
	for _, a := range args {
		src, err := statLocal(a)
		if err == nil && !src.exists() {
			err = errNotFound(a)
		}
		if err == nil {
			err = c.process(src, dst, 0)
		}
		if err != nil {
			c.sh.fail(err)
		}
	}
}

// target is getTargetPath: below dst when dst is a directory (always below
// the top level), else dst itself.
func (c *putCmd) target(name string, dst *pathData, depth int) (*pathData, error) {
	if depth == 0 && !dst.isDir() && !dst.representsDir() {
		return dst, nil
	}
	t := dst.childNamed(name)
	st, err := c.sh.stat(t)
	t.st = st
	return t, err
}

func (c *putCmd) process(src *localPath, dst *pathData, depth int) error {
	target, err := c.target(src.name(), dst, depth)
	if err != nil {
		return err
	}
	if src.isDir() {
		return c.copyDir(src, target, depth)
	}
	f, err := os.Open(src.path)
	if err != nil {
		return localError(src.text, err)
	}
	defer f.Close()
	if err := c.upload(f, target); err != nil {
		return err
	}
	return c.preserveRemote(src, target)
}

func (c *putCmd) copyDir(src *localPath, target *pathData, depth int) error {
	sh := c.sh
	switch {
	case target.exists() && !target.isDir():
		return errPath(target.text, msgNotDir)
	case !target.exists():
		if _, err := sh.fs.Mkdirs(sh.ctx, target.uri(), 0o777); err != nil {
			return sh.explain(target.text, target.abs, err)
		}
	}
	entries, err := os.ReadDir(src.path)
	if err != nil {
		return localError(src.text, err)
	}
	for _, e := range entries {
		child, err := src.child(e.Name())
		if err == nil {
			err = c.process(child, target, depth+1)
		}
		if err != nil {
			sh.fail(err)
		}
	}
	return c.preserveRemote(src, target)
}

// upload streams r into target through target._COPYING_ (unless -d), which
// it removes if anything fails.
func (c *putCmd) upload(r io.Reader, target *pathData) error {
	sh := c.sh
	if target.exists() && (target.isDir() || !c.overwrite) {
		return errPath(target.text, msgExists)
	}
	tmp := target
	if !c.direct {
		tmp = &pathData{text: target.text + copyingSuffix, ns: target.ns, abs: target.abs + copyingSuffix}
	}
	w, err := sh.fs.Create(sh.ctx, tmp.uri(), client.CreateOptions{Overwrite: true, NonRecursive: true})
	if err != nil {
		return sh.explain(target.text, target.abs, err)
	}
	_, err = io.Copy(w, r)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && tmp != target {
		err = sh.fs.Rename2(sh.ctx, tmp.uri(), target.uri(), true)
	}
	if err != nil {
		_, _ = sh.fs.Delete(sh.ctx, tmp.uri(), false)
		return sh.explain(target.text, target.abs, err)
	}
	return nil
}

// preserveRemote gives target src's times, ownership and mode (-p).
func (c *putCmd) preserveRemote(src *localPath, target *pathData) error {
	if !c.preserve {
		return nil
	}
	sh := c.sh
	mtime, atime := localTimes(src.fi)
	err := sh.fs.SetTimes(sh.ctx, target.uri(), mtime, atime)
	if owner, group := localOwner(src.fi); err == nil && (owner != "" || group != "") {
		err = sh.fs.SetOwner(sh.ctx, target.uri(), owner, group)
	}
	if err == nil {
		err = sh.fs.SetPermission(sh.ctx, target.uri(), localMode(src.fi))
	}
	return sh.explain(target.text, target.abs, err)
}
