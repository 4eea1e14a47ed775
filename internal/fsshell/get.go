package fsshell

import (
	"errors"
	"os"
	"path/filepath"
)

// getCmd is -get and -copyToLocal: files and directories (recursively) to
// the local file system, each written to <dst>._COPYING_ and renamed into
// place. Everything is streamed through client.Open.
type getCmd struct {
	sh *shell
	copyFlags
}

func runGet(sh *shell, args []string) error {
	cf := newFormat(1, unbounded, "crc", "ignoreCrc", "p", "f")
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
	dst, err := statLocal(dstArg)
	if err != nil {
		return err
	}
	c := &getCmd{sh: sh, copyFlags: copyFlags{overwrite: cf.opt("f"), preserve: preserveIf(cf.opt("p"))}}
	srcs := sh.expandAll(args)
	d := dest{dst.text, dst.exists(), dst.isDir(), dst.parentExists, ""}
	if err := checkDestination(d, len(srcs), c.overwrite); err != nil {
		return err
	}
	for _, src := range srcs {
		err := errNotFound(src.text)
		if src.exists() {
			err = c.process(src, dst, 0)
		}
		if err != nil {
			sh.fail(err)
		}
	}
	return nil
}

func (c *getCmd) target(name string, dst *localPath, depth int) (*localPath, error) {
	if depth == 0 && !dst.isDir() && !dst.representsDir() {
		return dst, nil
	}
	return dst.child(name)
}

func (c *getCmd) process(src *pathData, dst *localPath, depth int) error {
	target, err := c.target(src.name(), dst, depth)
	if err != nil {
		return err
	}
	if src.isDir() {
		return c.copyDir(src, target, depth)
	}
	if target.exists() && (target.isDir() || !c.overwrite) {
		return errPath(target.text, msgExists)
	}
	if err := c.download(src, target); err != nil {
		return err
	}
	return c.preserveLocal(src, target)
}

func (c *getCmd) copyDir(src *pathData, target *localPath, depth int) error {
	switch {
	case target.exists() && !target.isDir():
		return errPath(target.text, msgNotDir)
	case !target.exists():
		if err := os.MkdirAll(target.path, 0o777); err != nil {
			return localError(target.text, err)
		}
		fi, err := os.Stat(target.path)
		if err != nil {
			return localError(target.text, err)
		}
		target.fi = fi
	}
	c.sh.eachChild(src, func(child *pathData) {
		if err := c.process(child, target, depth+1); err != nil {
			c.sh.fail(err)
		}
	})
	return c.preserveLocal(src, target)
}

// download streams src into target through target._COPYING_.
func (c *getCmd) download(src *pathData, target *localPath) error {
	sh := c.sh
	r, err := sh.fs.Open(sh.ctx, src.uri())
	if err != nil {
		return sh.explain(src.text, src.abs, err)
	}
	defer r.Close()
	tmp := target.path + copyingSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return localError(target.text+copyingSuffix, err)
	}
	_, err = sh.transfer(f, r, r.Size(), src.text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target.path)
	}
	if err == nil {
		return nil
	}
	_ = os.Remove(tmp)
	if re := (*readError)(nil); errors.As(err, &re) {
		return sh.explain(src.text, src.abs, re.err)
	}
	return localError(target.text, err)
}

// preserveLocal gives target src's times, mode and ownership (-p); the
// ownership only where this host knows the names and allows the change.
func (c *getCmd) preserveLocal(src *pathData, target *localPath) error {
	if !c.preserve.any() {
		return nil
	}
	p := filepath.Clean(target.path)
	err := os.Chtimes(p, src.st.AccTime, src.st.ModTime)
	if err == nil {
		err = os.Chmod(p, osMode(src.st.Perm))
	}
	if err == nil {
		err = chownLocal(p, src.st.Owner, src.st.Group)
	}
	if err != nil {
		return localError(target.text, err)
	}
	return nil
}
